// Builds web/dist/ from web/src/: index.html, assets/app.js (one bundle),
// assets/app.css (ours plus Shudan's) and the board texture. No hashes or
// timestamps go into the output, so the same sources give the same bytes
// (scripts/web_tests.sh checks the committed dist/ against a fresh build).
//
// `node build.mjs --out DIR` writes to DIR instead (the check builds
// beside dist/, so dist/'s files keep their dates and cargo does not
// rebuild for nothing).
import * as esbuild from "esbuild";
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";

const at = process.argv.indexOf("--out");
const out = at > 0 && process.argv[at + 1] ? process.argv[at + 1] : "dist";
rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, "assets"), { recursive: true });

await esbuild.build({
  entryPoints: { app: "src/main.jsx" },
  bundle: true,
  minify: true,
  format: "esm",
  target: ["es2020"],
  jsx: "automatic",
  jsxImportSource: "preact",
  outdir: join(out, "assets"),
  // The stone images are small: inline. The board texture is large and
  // already compressed: its own file, under a fixed name.
  loader: { ".svg": "dataurl", ".png": "file" },
  assetNames: "[name]",
  legalComments: "eof",
  logLevel: "warning",
});

copyFileSync("src/index.html", join(out, "index.html"));
