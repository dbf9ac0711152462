#!/usr/bin/env node
// Validate glTF/GLB files with the Khronos glTF validator and print its reports as JSON.
//
// Usage: node validate.mjs FILE [FILE...]
// Stdout: a JSON array with the validator's report for each file, in order.
// Exit status: 0 when no file has errors or warnings, 1 when one has, 2 when a file cannot be read.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const validator = require("gltf-validator");

async function validateFile(file) {
  const bytes = new Uint8Array(await readFile(file));
  return validator.validateBytes(bytes, {
    uri: path.basename(file),
    maxIssues: 0,
    writeTimestamp: false,
    // A .glb of ours is self-contained; any external reference is a fault of the file.
    externalResourceFunction: (uri) => Promise.reject(new Error(`external resource ${uri} not allowed`)),
  });
}

async function main(files) {
  if (files.length === 0) {
    process.stderr.write("usage: node validate.mjs FILE [FILE...]\n");
    return 2;
  }
  const reports = [];
  for (const file of files) {
    try {
      reports.push(await validateFile(file));
    } catch (err) {
      process.stderr.write(`${file}: cannot validate: ${err && err.message ? err.message : err}\n`);
      return 2;
    }
  }
  process.stdout.write(JSON.stringify(reports, null, 1) + "\n");
  const bad = reports.some((r) => r.issues.numErrors > 0 || r.issues.numWarnings > 0);
  return bad ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
