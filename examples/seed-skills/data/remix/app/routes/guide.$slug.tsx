export const handle = { pageRole: "R4" };
export default function Guide() { return null; }
