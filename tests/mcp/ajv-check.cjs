// Compile JSON Schemas and validate documents with ajv 8 (draft 2020-12,
// ajv-formats), in its default and its strict mode: the independent consumer
// of tests/ajv.rs. Reads {"schemas": [{name, schema}], "documents": [{name,
// schema, doc}]} on stdin (a document names the schema it must satisfy);
// prints a JSON list of problems, each naming the mode and the item.
const Ajv2020 = require("ajv/dist/2020").default;
const addFormats = require("ajv-formats").default;

const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
const problems = [];
// ajv's defaults (unknown keywords and formats throw, strictTypes logs), and
// `strict: true` (every strict rule throws: types, tuples, `required`).
for (const mode of ["default", "strict"]) {
  const compiled = new Map();
  for (const { name, schema } of input.schemas) {
    // What ajv would only log is a problem too: a consumer may run with it on.
    const logger = {
      log() {},
      warn: (...m) => problems.push(`${mode}: schema ${name}: ${m.join(" ")}`),
      error: (...m) => problems.push(`${mode}: schema ${name}: ${m.join(" ")}`),
    };
    try {
      // Each schema alone: their `$id`s may repeat across skills.
      const options = mode === "strict" ? { strict: true, allErrors: true, logger } : { allErrors: true, logger };
      const local = new Ajv2020(options);
      addFormats(local);
      compiled.set(name, local.compile(schema));
    } catch (e) {
      problems.push(`${mode}: schema ${name}: ${e.message}`);
    }
  }
  for (const { name, schema, doc } of input.documents) {
    const validate = compiled.get(schema);
    if (!validate) continue;
    if (!validate(doc)) {
      for (const err of validate.errors) {
        problems.push(`${mode}: ${name} against ${schema}: ${err.instancePath || "/"} ${err.message}`);
      }
    }
  }
}
console.log(JSON.stringify(problems));
