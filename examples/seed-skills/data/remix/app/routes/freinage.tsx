export const handle = { pageRole: "R1" };
export default function Freinage() { return null; }
