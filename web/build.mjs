// Builds web/dist/ from web/src/: index.html, assets/app.js (one bundle),
// assets/app.css (ours plus Shudan's) and the board texture. No hashes or
// timestamps go into the output, so the same sources give the same bytes
// (scripts/web_tests.sh checks the committed dist/ against a fresh build).
import * as esbuild from "esbuild";
import { copyFileSync, mkdirSync, rmSync } from "node:fs";

rmSync("dist", { recursive: true, force: true });
mkdirSync("dist/assets", { recursive: true });

await esbuild.build({
  entryPoints: { app: "src/main.jsx" },
  bundle: true,
  minify: true,
  format: "esm",
  target: ["es2020"],
  jsx: "automatic",
  jsxImportSource: "preact",
  outdir: "dist/assets",
  // The stone images are small: inline. The board texture is large and
  // already compressed: its own file, under a fixed name.
  loader: { ".svg": "dataurl", ".png": "file" },
  assetNames: "[name]",
  legalComments: "eof",
  logLevel: "warning",
});

copyFileSync("src/index.html", "dist/index.html");
