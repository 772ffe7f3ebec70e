// Reads every record of the WARC files named on the command line with
// webrecorder's warcio (an independent reader), checks each record's
// WARC-Block-Digest and WARC-Payload-Digest (sha256), and prints one JSON
// line per record: {file, type, uri, status, ok}. It exits 1 on the
// first file it cannot parse or digest that does not verify.
// Usage: node warcio-check.cjs WARCIO_MODULE_DIR FILE...
"use strict";
const fs = require("fs");
const crypto = require("crypto");
const { WARCParser } = require(process.argv[2]);

function sha256(buf) {
  return "sha256:" + crypto.createHash("sha256").update(buf).digest("hex");
}

function indexOfBlankLine(buf) {
  for (let i = 0; i + 3 < buf.length; i++) {
    if (buf[i] === 13 && buf[i + 1] === 10 && buf[i + 2] === 13 && buf[i + 3] === 10) return i + 4;
  }
  return -1;
}

async function check(file) {
  // Pass 1: raw blocks, for the digests.
  const raw = new WARCParser(fs.createReadStream(file), { parseHttp: false });
  const out = [];
  for await (const record of raw) {
    const block = Buffer.from(await record.readFully());
    const got = { file, type: record.warcType, uri: record.warcTargetURI || "", ok: true };
    const bd = record.warcHeader("WARC-Block-Digest");
    if (!bd || bd !== sha256(block)) {
      throw new Error(`${file}: ${got.type} ${got.uri}: block digest ${bd} does not match ${sha256(block)}`);
    }
    const pd = record.warcHeader("WARC-Payload-Digest");
    if ((got.type === "response" || got.type === "request") && pd) {
      const at = indexOfBlankLine(block);
      const payload = at < 0 ? Buffer.alloc(0) : block.subarray(at);
      if (pd !== sha256(payload)) {
        throw new Error(`${file}: ${got.type} ${got.uri}: payload digest ${pd} does not match ${sha256(payload)}`);
      }
    }
    out.push(got);
  }
  // Pass 2: HTTP heads parsed, as a replay tool reads them.
  const parsed = new WARCParser(fs.createReadStream(file));
  let i = 0;
  for await (const record of parsed) {
    await record.readFully(true);
    if (record.warcType === "response") {
      if (!record.httpHeaders || !record.httpHeaders.statusCode) {
        throw new Error(`${file}: response ${record.warcTargetURI}: no HTTP status`);
      }
      out[i].status = Number(record.httpHeaders.statusCode);
    }
    i++;
  }
  if (i !== out.length) throw new Error(`${file}: ${out.length} records raw, ${i} parsed`);
  return out;
}

(async () => {
  for (const file of process.argv.slice(3)) {
    for (const r of await check(file)) console.log(JSON.stringify(r));
  }
})().catch((e) => {
  console.error(String(e && e.stack || e));
  process.exit(1);
});
