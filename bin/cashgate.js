#!/usr/bin/env node
// The operator CLI; `npm run build` (run by npm install) compiles dist/.
await import('../dist/src/cli.js');
