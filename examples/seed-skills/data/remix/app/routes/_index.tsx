export const handle = { pageRole: "R1" };
export default function Index() { return null; }
