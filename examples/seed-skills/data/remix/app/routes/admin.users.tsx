export const handle = { pageRole: "R3" };
export default function AdminUsers() { return null; }
