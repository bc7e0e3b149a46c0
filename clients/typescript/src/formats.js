// The formats whose check the Rust runtime makes in a way a general-purpose
// library does not, written from their RFCs. The Python package holds the same
// grammars (clients/python/src/skill_registry/_formats.py); the cross-language
// test (tests/consumers.rs) holds both to the runtime's answers.

// RFC 3986, appendix A.
const UNRESERVED = "A-Za-z0-9\\-._~";
const SUB_DELIMS = "!$&'()*+,;=";
const PCT = "%[0-9A-Fa-f]{2}";
const PCHAR = `(?:[${UNRESERVED}${SUB_DELIMS}:@]|${PCT})`;
const SEGMENT = `${PCHAR}*`;
const SEGMENT_NZ = `${PCHAR}+`;
const SEGMENT_NZ_NC = `(?:[${UNRESERVED}${SUB_DELIMS}@]|${PCT})+`;
const H16 = "[0-9A-Fa-f]{1,4}";
const DEC_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9][0-9]|[0-9])";
const IPV4 = `${DEC_OCTET}\\.${DEC_OCTET}\\.${DEC_OCTET}\\.${DEC_OCTET}`;
const LS32 = `(?:${H16}:${H16}|${IPV4})`;
const IPV6 = [
  `(?:${H16}:){6}${LS32}`,
  `::(?:${H16}:){5}${LS32}`,
  `(?:${H16})?::(?:${H16}:){4}${LS32}`,
  `(?:(?:${H16}:){0,1}${H16})?::(?:${H16}:){3}${LS32}`,
  `(?:(?:${H16}:){0,2}${H16})?::(?:${H16}:){2}${LS32}`,
  `(?:(?:${H16}:){0,3}${H16})?::${H16}:${LS32}`,
  `(?:(?:${H16}:){0,4}${H16})?::${LS32}`,
  `(?:(?:${H16}:){0,5}${H16})?::${H16}`,
  `(?:(?:${H16}:){0,6}${H16})?::`,
]
  .map((alternative) => `(?:${alternative})`)
  .join("|");
const IP_LITERAL = `\\[(?:${IPV6}|v[0-9A-Fa-f]+\\.[${UNRESERVED}${SUB_DELIMS}:]+)\\]`;
const REG_NAME = `(?:[${UNRESERVED}${SUB_DELIMS}]|${PCT})*`;
const USERINFO = `(?:[${UNRESERVED}${SUB_DELIMS}:]|${PCT})*`;
const AUTHORITY = `(?:${USERINFO}@)?(?:${IP_LITERAL}|${REG_NAME})(?::[0-9]*)?`;
const PATH_ABEMPTY = `(?:/${SEGMENT})*`;
const PATH_ABSOLUTE = `/(?:${SEGMENT_NZ}(?:/${SEGMENT})*)?`;
const QUERY = `(?:${PCHAR}|[/?])*`;
const TAIL = `(?:\\?${QUERY})?(?:#${QUERY})?`;
const SCHEME = "[A-Za-z][A-Za-z0-9+\\-.]*";
const URI = `${SCHEME}:(?://${AUTHORITY}${PATH_ABEMPTY}|${PATH_ABSOLUTE}|${SEGMENT_NZ}(?:/${SEGMENT})*|)${TAIL}`;
const RELATIVE_REF = `(?://${AUTHORITY}${PATH_ABEMPTY}|${PATH_ABSOLUTE}|${SEGMENT_NZ_NC}(?:/${SEGMENT})*|)${TAIL}`;

const uri = new RegExp(`^(?:${URI})$`);
const uriReference = new RegExp(`^(?:${URI}|${RELATIVE_REF})$`);
const uuid = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;
const ipv4 = new RegExp(`^${IPV4}$`);

/** RFC 3339 `full-date`: a real day of the proleptic Gregorian calendar. */
function isDate(s) {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  return month >= 1 && month <= 12 && day >= 1 && day <= days[month - 1];
}

/** Format checks by name, each taking a string. */
export const FORMATS = {
  uri: (s) => uri.test(s),
  "uri-reference": (s) => uriReference.test(s),
  uuid: (s) => uuid.test(s),
  ipv4: (s) => ipv4.test(s),
  date: isDate,
};
