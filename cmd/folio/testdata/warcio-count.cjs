// Reads every record of each WARC file named on the command line with npm's
// warcio (an implementation independent of folio's), reading each record's
// whole content, and prints "<file> <n> records" per file. Any parse error
// exits non-zero.
const fs = require("fs");
const path = require("path");
const { WARCParser } = require("warcio");

async function main() {
  for (const file of process.argv.slice(2)) {
    const parser = new WARCParser(fs.createReadStream(file));
    let n = 0;
    for await (const record of parser) {
      if (!record.warcType) throw new Error(`${file}: record ${n + 1} has no WARC-Type`);
      await record.readFully(false);
      n++;
    }
    console.log(`${path.basename(file)} ${n} records`);
  }
}

main().catch((e) => {
  console.error(String(e && e.stack || e));
  process.exit(1);
});
