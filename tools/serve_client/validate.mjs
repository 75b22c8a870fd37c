// Validates a JSON document against a JSON Schema with ajv (and ajv-formats), as tools_check.mjs
// does: exit 0 when it validates, 1 (with ajv's errors) when not.
//   node validate.mjs SCHEMA.json DOCUMENT.json
import { readFileSync } from "node:fs";
import Ajv from "ajv";
import addFormats from "ajv-formats";

const [schemaPath, documentPath] = process.argv.slice(2);
const ajv = new Ajv({ strict: true, allErrors: true });
addFormats(ajv);
const check = ajv.compile(JSON.parse(readFileSync(schemaPath, "utf8")));
const document = JSON.parse(readFileSync(documentPath, "utf8"));
if (!check(document)) {
  console.error(`${JSON.stringify(document)}: ${ajv.errorsText(check.errors)}`);
  process.exit(1);
}
