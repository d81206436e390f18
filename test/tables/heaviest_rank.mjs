// docs/tables.md's "heaviest rank" query, run with DuckDB (the npm package pinned here;
// scripts/html_assets.sh installs it) over `cumemtrace export --format jsonl` of three
// simulated ranks (test/integration/programs/job_ranks.c, the ranks of job_test.cpp):
//   rank 0: 100 MiB on device 0; rank 1: 100 MiB on device 1 and 1 MiB on device 0;
//   rank 2: 100 + 200 MiB at once on device 1.
// The answer must be rank 2, device 1, 300 MiB.
//
//   node heaviest_rank.mjs CLI JOB_RANKS PRELOAD SIM_DIR DOCS_TABLES_MD
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";

const [cli, jobRanks, preload, simDir, tablesMd] = process.argv.slice(2);
const MiB = 1024 * 1024;

// The SQL block after the page's marker, as a reader would copy it.
function pageQuery() {
  const text = readFileSync(tablesMd, "utf8");
  const at = text.indexOf("<!-- heaviest-rank -->");
  const m = at >= 0 ? /```sql\n([\s\S]*?)```/.exec(text.slice(at)) : null;
  if (!m) throw new Error(`no heaviest-rank query in ${tablesMd}`);
  return m[1];
}

const work = mkdtempSync(join(tmpdir(), "cumemtrace-tables-"));
let failed = false;
try {
  const ranks = [["0", "100", "0", "-1", "0", "0"], ["1", "100", "0", "0", "0", "0"], ["1", "100", "200", "-1", "0", "0"]];
  ranks.forEach((args, rank) => {
    execFileSync(jobRanks, args, {
      env: { ...process.env, LD_PRELOAD: preload, LD_LIBRARY_PATH: simDir, CUMEMTRACE_OUTPUT: join(work, `trace-${rank}.trace`),
             SIMCUDA_DEVICES: "2", SIMCUDA_CAPACITY: String(384 * MiB), SIMCUDA_CONTEXT_BYTES: "1048576",
             RANK: String(rank), LOCAL_RANK: String(rank), WORLD_SIZE: "3" },
      stdio: ["ignore", "ignore", "inherit"],
    });
  });
  const traces = readdirSync(work).filter((f) => f.startsWith("trace-")).sort().map((f) => join(work, f));
  if (traces.length !== 3) throw new Error(`expected 3 traces, found ${traces.length}`);
  execFileSync(cli, ["export", "--format", "jsonl", "-o", join(work, "out"), ...traces], { stdio: "inherit" });

  process.chdir(work);  // the query names 'out/…', as the page's other examples do
  const db = await DuckDBInstance.create(":memory:");
  const rows = (await (await db.connect()).runAndReadAll(pageQuery())).getRowObjectsJson();
  console.log(JSON.stringify(rows));
  const want = { rank: 2, device: 1, peak_bytes: 300 * MiB };
  const got = rows.length === 1 ? rows[0] : {};
  for (const [key, value] of Object.entries(want)) {
    if (Number(got[key]) !== value) {
      console.error(`heaviest rank: ${key} is ${got[key]}, expected ${value}`);
      failed = true;
    }
  }
  if (rows.length !== 1) {
    console.error(`heaviest rank: ${rows.length} rows, expected 1`);
    failed = true;
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
