export const TYPES_FILE: string;
/** The source of src/i18n/catalog-types.ts as the English catalog makes it, formatted. */
export function generateCatalogTypes(): Promise<string>;
