export const handle = { pageRole: "R2" };
export default function Pieces() { return null; }
