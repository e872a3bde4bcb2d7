// Generates src/i18n/catalog-types.ts from the English catalog: each namespace's keys and each
// message's arguments, so a missing key or argument fails the type-check. `npm run i18n:types`;
// test/i18n.test.ts fails when the file is not the one this script writes.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse, TYPE } from '@formatjs/icu-messageformat-parser';
import * as prettier from 'prettier';

const root = fileURLToPath(new URL('..', import.meta.url));
export const TYPES_FILE = `${root}src/i18n/catalog-types.ts`;

/** The TypeScript type of each argument a message takes, from its parsed elements. */
function argumentsOf(elements, into) {
  for (const el of elements) {
    switch (el.type) {
      case TYPE.argument:
        into.set(el.value, into.get(el.value) ?? 'string | number');
        break;
      case TYPE.number:
      case TYPE.plural:
        into.set(el.value, 'number');
        break;
      case TYPE.date:
      case TYPE.time:
        into.set(el.value, 'Date | number');
        break;
      case TYPE.select:
        into.set(el.value, 'string');
        break;
      default:
        break;
    }
    if (el.type === TYPE.plural || el.type === TYPE.select) {
      for (const option of Object.values(el.options)) argumentsOf(option.value, into);
    }
  }
  return into;
}

export async function generateCatalogTypes() {
  const catalog = JSON.parse(readFileSync(`${root}src/i18n/locales/en.json`, 'utf8'));
  const namespaces = new Map();
  for (const [key, message] of Object.entries(catalog)) {
    // A key is `surface.area.name`: its namespace is the first two segments (the name may hold dots).
    const dot = key.indexOf('.', key.indexOf('.') + 1);
    if (key.indexOf('.') <= 0 || dot < 0) throw new Error(`the key ${key} is not surface.area.name`);
    const namespace = key.slice(0, dot);
    const args = argumentsOf(parse(message, { ignoreTag: true, requiresOtherClause: true }), new Map());
    const type =
      args.size === 0 ? 'never' : `{ ${[...args].map(([name, t]) => `${JSON.stringify(name)}: ${t}`).join('; ')} }`;
    if (!namespaces.has(namespace)) namespaces.set(namespace, []);
    namespaces.get(namespace).push(`${JSON.stringify(key.slice(dot + 1))}: ${type};`);
  }
  const body = [...namespaces]
    .map(([namespace, entries]) => `${JSON.stringify(namespace)}: {\n${entries.join('\n')}\n};`)
    .join('\n');
  const source =
    '// Generated from src/i18n/locales/en.json by `npm run i18n:types`: do not edit.\n' +
    "// Each namespace's messages and the arguments each takes (`never`: none).\n" +
    `export interface Catalog {\n${body}\n}\n`;
  const options = await prettier.resolveConfig(TYPES_FILE);
  return prettier.format(source, { ...options, parser: 'typescript' });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(TYPES_FILE, await generateCatalogTypes());
  console.log(`wrote ${TYPES_FILE}`);
}
