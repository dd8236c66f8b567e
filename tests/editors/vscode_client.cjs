// Drives `lifeguard lsp` with VS Code's own protocol library
// (vscode-languageserver-protocol over vscode-jsonrpc), as an extension's
// language client does: initialize, open FILE, wait for its diagnostics,
// ask for the quick fix of each one and apply the only one there is
// (JavaScript strings count UTF-16 units, as the protocol does), then shut
// down. Prints {"diagnostics": [...], "fixes": N, "fixed": "..."} as JSON.
//
// node vscode_client.cjs LIFEGUARD FILE
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const rpc = require('vscode-languageserver-protocol/node');

const [binary, file] = process.argv.slice(2);
const server = spawn(binary, ['lsp', '--stdio'], { stdio: ['pipe', 'pipe', 'inherit'] });
const connection = rpc.createProtocolConnection(
  new rpc.StreamMessageReader(server.stdout),
  new rpc.StreamMessageWriter(server.stdin),
);
const uri = pathToFileURL(file).href;
const text = fs.readFileSync(file, 'utf8');

function offset(content, position) {
  let line = 0;
  let at = 0;
  while (line < position.line) {
    const next = content.indexOf('\n', at);
    if (next < 0) return content.length;
    at = next + 1;
    line += 1;
  }
  const end = content.indexOf('\n', at);
  return Math.min(at + position.character, end < 0 ? content.length : end);
}

function apply(content, edits) {
  const spans = edits
    .map((e) => [offset(content, e.range.start), offset(content, e.range.end), e.newText])
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let out = '';
  let at = 0;
  for (const [from, to, replacement] of spans) {
    out += content.slice(at, from) + replacement;
    at = to;
  }
  return out + content.slice(at);
}

async function main() {
  const published = new Promise((resolve) => {
    connection.onNotification(rpc.PublishDiagnosticsNotification.type, (params) => {
      if (params.uri === uri) resolve(params.diagnostics);
    });
  });
  connection.listen();
  const root = pathToFileURL(path.dirname(file)).href;
  const init = await connection.sendRequest(rpc.InitializeRequest.type, {
    processId: process.pid,
    rootUri: root,
    workspaceFolders: [{ uri: root, name: 'manifests' }],
    capabilities: { textDocument: { codeAction: { codeActionLiteralSupport: { codeActionKind: { valueSet: ['quickfix'] } } } } },
  });
  if (!init.capabilities.codeActionProvider) throw new Error('no code actions offered');
  await connection.sendNotification(rpc.InitializedNotification.type, {});
  await connection.sendNotification(rpc.DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: 'yaml', version: 1, text },
  });
  const diagnostics = await published;
  // Each quick fix is worked out against the text as the diagnostics saw
  // it, so one is applied: the file's only fixable finding's.
  const fixes = [];
  for (const diagnostic of diagnostics) {
    const actions = await connection.sendRequest(rpc.CodeActionRequest.type, {
      textDocument: { uri },
      range: diagnostic.range,
      context: { diagnostics: [diagnostic], only: ['quickfix'] },
    });
    fixes.push(...(actions || []).filter((a) => a.isPreferred));
  }
  const fixed = fixes.length === 1 ? apply(text, fixes[0].edit.changes[uri]) : text;
  await connection.sendRequest(rpc.ShutdownRequest.type);
  await connection.sendNotification(rpc.ExitNotification.type);
  process.stdout.write(JSON.stringify({ diagnostics, fixes: fixes.length, fixed }));
  connection.dispose();
}

const deadline = setTimeout(() => {
  process.stderr.write('vscode_client: no result within 30 s\n');
  process.exit(3);
}, 30000);
main()
  .then(() => {
    clearTimeout(deadline);
    server.on('exit', (code) => process.exit(code === 0 ? 0 : 4));
  })
  .catch((e) => {
    process.stderr.write(`vscode_client: ${e.stack || e}\n`);
    process.exit(2);
  });
