// Drives the conversation-search binary with the official MCP TypeScript SDK client: lists the
// tools, compiles every schema with a strict JSON Schema validator (unknown formats or keywords
// fail), then calls every tool at several budgets; the SDK validates each structured result
// against the tool's output schema, and this script checks the text copy and the budget too.
//
// Usage: node client.mjs PATH-TO-BINARY   (CLIENT_FIXTURES: the projects dir to index)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import Ajv from "ajv";
import addFormats from "ajv-formats";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const binary = process.argv[2] ?? path.join(here, "../../target/release/conversation-search");
const projects = process.env.CLIENT_FIXTURES ?? path.join(here, "../../fixtures/claude/projects");

function fail(message) {
  console.error(`sdk-client: ${message}`);
  process.exit(1);
}

const strict = new Ajv({ strict: true, allErrors: true });
addFormats(strict);

const transport = new StdioClientTransport({
  command: binary,
  args: ["--projects-dir", projects, "--no-cache"],
  stderr: "ignore",
  env: { ...process.env, CONVERSATION_SEARCH_LOG: "warn" },
});
const client = new Client({ name: "conversation-search-ci", version: "1.0.0" });
await client.connect(transport);

const { tools } = await client.listTools();
const schemas = new Map();
for (const tool of tools) {
  for (const [kind, schema] of [["input", tool.inputSchema], ["output", tool.outputSchema]]) {
    try {
      schemas.set(`${tool.name}/${kind}`, strict.compile(schema));
    } catch (e) {
      fail(`${tool.name} ${kind} schema is not strict JSON Schema: ${e.message}`);
    }
  }
}
console.log(`${tools.length} tools, ${JSON.stringify({ tools }).length} bytes of tools/list`);

let calls = 0;
/** Calls a tool (the SDK validates structuredContent); checks text, schema and budget. */
async function call(name, args, { error = false } = {}) {
  calls += 1;
  if (process.env.CLIENT_TRACE) console.error(`call ${name} ${JSON.stringify(args)}`);
  const result = await client.callTool({ name, arguments: args });
  if (Boolean(result.isError) !== error) {
    fail(`${name} ${JSON.stringify(args)}: isError=${result.isError}: ${JSON.stringify(result)}`);
  }
  if (error) return null;
  const text = result.content?.[0]?.text ?? "";
  const value = result.structuredContent;
  if (JSON.stringify(JSON.parse(text)) !== JSON.stringify(value)) {
    fail(`${name}: text and structuredContent differ`);
  }
  const validate = schemas.get(`${name}/output`);
  if (!validate(value)) fail(`${name}: ${strict.errorsText(validate.errors)}`);
  const max = args.max_chars ?? 60000;
  if ([...text].length > max) fail(`${name} ${JSON.stringify(args)}: ${[...text].length} > ${max}`);
  return value;
}

// wait for the index
for (let i = 0; ; i++) {
  const status = await call("index_status", {});
  if (status.complete) break;
  if (i > 600) fail("the index never completed");
  await new Promise((r) => setTimeout(r, 100));
}

const budgets = [500, 777, 6000, undefined];
const withBudget = (args, b) => (b === undefined ? args : { ...args, max_chars: b });
const found = await call("search_conversations", { query: "error", limit: 5 });
if (!found.results.length) fail("the fixture search found nothing");
const hit = found.results[0];
for (const b of budgets) {
  await call("search_conversations", withBudget({ query: "error test", role: "assistant", sort: "recent" }, b));
  await call("search_conversations", withBudget({ query: '"the" -zzz', source: "claude" }, b));
  await call("list_conversations", withBudget({ limit: 20 }, b));
  await call("find_file_history", withBudget({ path: "src" }, b));
  const turn = await call("read_turn", withBudget({ session_id: hit.session_id, turn_number: hit.turn_number }, b));
  if (turn.next_offset !== undefined) {
    await call("read_turn", withBudget({ session_id: hit.session_id, turn_number: hit.turn_number, char_offset: turn.next_offset }, b));
  }
  await call("read_conversation", withBudget({ session_id: hit.session_id, limit: 5 }, b));
  await call("recent_context", withBudget({ scope: "all", sessions: 5 }, b));
  await call("index_status", withBudget({}, b));
}
await call("search_conversations", { query: "" }, { error: true });
await call("read_turn", { session_id: "no-such-session", turn_number: 0 }, { error: true });
try {
  await client.callTool({ name: "no_such_tool", arguments: {} });
  fail("an unknown tool was accepted");
} catch (e) {
  if (!String(e.message).includes("no_such_tool")) fail(`unknown tool error does not name it: ${e.message}`);
}
await client.close();
console.log(`all tools validated (${calls} calls)`);
