/**
 * Pix BR Code (EMV QRCPS-MPM) payloads: the text behind a Pix QR code and behind "Pix copia e cola".
 * A payload is a flat list of ID(2) + LEN(2) + VALUE fields; templates nest the same encoding in VALUE.
 */

/** GUI that marks the merchant account template as Pix. */
export const PIX_GUI = 'br.gov.bcb.pix';

/** Field limits of the BR Code, in bytes. */
export const BR_CODE_LIMITS = {
  template: 99,
  pixKey: 77,
  locationUrl: 77,
  amount: 13,
  merchantName: 25,
  merchantCity: 15,
  txid: 25,
} as const;

export interface StaticBrCodeInput {
  /** The receiver's Pix key exactly as registered in the DICT. */
  pixKey: string;
  merchantName: string;
  merchantCity: string;
  /** Reais with two decimals and a dot, e.g. "10.00"; omitted when the payer types the amount. */
  amount?: string;
  /** Reference the payment comes back with, [A-Za-z0-9]{1,25}; omitted gives '***'. */
  txid?: string;
  /** Free text shown to the payer. */
  description?: string;
}

export interface DynamicBrCodeInput {
  /** The PSP location (API Pix `loc.location`) without the https:// scheme. */
  locationUrl: string;
  merchantName: string;
  merchantCity: string;
  /** Reais with two decimals and a dot; informative only, the location's payload is authoritative. */
  amount?: string;
}

/** One TLV field of a BR Code; `fields` is present for templates. */
export interface BrCodeField {
  id: string;
  value: string;
  fields?: readonly BrCodeField[];
}

export interface ParsedBrCode {
  fields: readonly BrCodeField[];
  /** Whether field 63 matches the CRC of everything before it, `6304` included. */
  crcValid: boolean;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection) over the UTF-8 bytes, as 4 uppercase hex digits. */
export function crc16ccitt(text: string): string {
  let crc = 0xffff;
  for (const byte of encoder.encode(text)) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

function byteLength(text: string): number {
  return encoder.encode(text).length;
}

function field(id: string, value: string): string {
  const length = byteLength(value);
  if (length > 99) throw new RangeError(`BR Code field ${id} would be ${length} bytes; at most 99 fit`);
  return `${id}${String(length).padStart(2, '0')}${value}`;
}

/** Name and city go out as uppercase ASCII without accents: every payer app can show them. */
export function normalizeMerchantText(text: string, maxLength: number, label: string): string {
  const ascii = text
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .toUpperCase();
  if (ascii === '') throw new RangeError(`${label} must have at least one ASCII character after removing accents`);
  return ascii.slice(0, maxLength).trimEnd();
}

function amountField(amount: string | undefined): string {
  if (amount === undefined) return '';
  if (!/^(?:0|[1-9]\d{0,9})\.\d{2}$/.test(amount)) {
    throw new RangeError(
      `amount must be reais with two decimals and a dot, at most ${BR_CODE_LIMITS.amount} characters, e.g. "10.00"; got "${amount}"`,
    );
  }
  if (/^0\.00$/.test(amount))
    throw new RangeError('amount must be greater than zero; omit it to let the payer type the amount');
  return field('54', amount);
}

function trailer(merchantName: string, merchantCity: string, txid: string): string {
  return (
    field('58', 'BR') +
    field('59', normalizeMerchantText(merchantName, BR_CODE_LIMITS.merchantName, 'merchantName')) +
    field('60', normalizeMerchantText(merchantCity, BR_CODE_LIMITS.merchantCity, 'merchantCity')) +
    field('62', field('05', txid))
  );
}

function merchantAccountTemplate(subfields: string): string {
  const length = byteLength(subfields);
  if (length > BR_CODE_LIMITS.template) {
    throw new RangeError(
      `Pix merchant account template (ID 26) would be ${length} bytes; at most ${BR_CODE_LIMITS.template} fit`,
    );
  }
  return field('26', subfields);
}

function withCrc(payload: string): string {
  const body = `${payload}6304`;
  return body + crc16ccitt(body);
}

/** A static BR Code: the key is in the code, which can be paid many times and needs no server at scan time. */
export function staticBrCode(input: StaticBrCodeInput): string {
  const { pixKey, description, txid } = input;
  if (pixKey === '' || !/^[\x21-\x7e]+$/.test(pixKey))
    throw new RangeError('pixKey must be non-empty printable ASCII without spaces');
  if (pixKey.length > BR_CODE_LIMITS.pixKey) {
    throw new RangeError(`pixKey is ${pixKey.length} characters; a Pix key has at most ${BR_CODE_LIMITS.pixKey}`);
  }
  if (txid !== undefined && txid !== '***' && !/^[A-Za-z0-9]{1,25}$/.test(txid)) {
    throw new RangeError(`txid must be 1 to ${BR_CODE_LIMITS.txid} letters or digits ([A-Za-z0-9]); got "${txid}"`);
  }
  const keyed = field('00', PIX_GUI) + field('01', pixKey);
  let info = '';
  if (description !== undefined && description !== '') {
    // Accents are dropped so the length counts bytes and characters alike for every reader.
    const ascii = description.normalize('NFD').replace(/[\u0300-\u036f]/g, '');
    if (!/^[\x20-\x7e]+$/.test(ascii))
      throw new RangeError('description must be printable ASCII once accents are removed');
    const room = BR_CODE_LIMITS.template - keyed.length - 4;
    if (ascii.length > room) {
      throw new RangeError(
        `description is ${ascii.length} characters; with this Pix key at most ${Math.max(room, 0)} fit in the ${BR_CODE_LIMITS.template}-byte template 26`,
      );
    }
    info = field('02', ascii);
  }
  const account = merchantAccountTemplate(keyed + info);
  const payload =
    field('00', '01') +
    account +
    field('52', '0000') +
    field('53', '986') +
    amountField(input.amount) +
    trailer(input.merchantName, input.merchantCity, txid ?? '***');
  return withCrc(payload);
}

/** A dynamic BR Code: the payer's app fetches the charge from the PSP location, so it is single-use (01 = 12). */
export function dynamicBrCode(input: DynamicBrCodeInput): string {
  const { locationUrl } = input;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(locationUrl))
    throw new RangeError('locationUrl must be given without a scheme such as https://');
  if (locationUrl === '' || !/^[\x21-\x7e]+$/.test(locationUrl))
    throw new RangeError('locationUrl must be non-empty printable ASCII without spaces');
  if (locationUrl.length > BR_CODE_LIMITS.locationUrl) {
    throw new RangeError(`locationUrl is ${locationUrl.length} characters; at most ${BR_CODE_LIMITS.locationUrl} fit`);
  }
  const account = merchantAccountTemplate(field('00', PIX_GUI) + field('25', locationUrl));
  const payload =
    field('00', '01') +
    field('01', '12') +
    account +
    field('52', '0000') +
    field('53', '986') +
    amountField(input.amount) +
    trailer(input.merchantName, input.merchantCity, '***');
  return withCrc(payload);
}

/** Templates per EMV: merchant account information (26-51), additional data (62), language (64), unreserved (80-99). */
function isTemplate(id: string): boolean {
  const n = Number(id);
  return (n >= 26 && n <= 51) || n === 62 || n === 64 || n >= 80;
}

function parseFields(bytes: Uint8Array, start: number, end: number, path: string, nested: boolean): BrCodeField[] {
  const fields: BrCodeField[] = [];
  const seen = new Set<string>();
  let at = start;
  while (at < end) {
    if (end - at < 4) throw new SyntaxError(`BR Code${path} has ${end - at} stray bytes at offset ${at}`);
    const header = String.fromCharCode(...bytes.subarray(at, at + 4));
    if (!/^\d{4}$/.test(header))
      throw new SyntaxError(`BR Code${path} has a non-numeric ID or length "${header}" at offset ${at}`);
    const id = header.slice(0, 2);
    const length = Number(header.slice(2));
    const valueEnd = at + 4 + length;
    if (valueEnd > end)
      throw new SyntaxError(`BR Code${path} field ${id} claims ${length} bytes but only ${end - at - 4} remain`);
    if (seen.has(id)) throw new SyntaxError(`BR Code${path} repeats field ${id}`);
    seen.add(id);
    let value: string;
    try {
      value = decoder.decode(bytes.subarray(at + 4, valueEnd));
    } catch {
      throw new SyntaxError(`BR Code${path} field ${id} is not valid UTF-8`);
    }
    if (!nested && isTemplate(id))
      fields.push({ id, value, fields: parseFields(bytes, at + 4, valueEnd, `${path} template ${id}`, true) });
    else fields.push({ id, value });
    at = valueEnd;
  }
  return fields;
}

/**
 * Reads a BR Code into its TLV tree. Throws SyntaxError when the TLV is malformed, the code does not
 * start with 000201 or does not end with a 4-hex-digit CRC field 63. A CRC that differs from the
 * uppercase hex we compute only clears `crcValid`, so a caller can still show what the code holds.
 */
export function parseBrCode(code: string): ParsedBrCode {
  const bytes = encoder.encode(code);
  const fields = parseFields(bytes, 0, bytes.length, '', false);
  const first = fields[0];
  if (first?.id !== '00' || first.value !== '01')
    throw new SyntaxError('BR Code must start with field 00 (payload format indicator) set to 01');
  const last = fields[fields.length - 1];
  if (last?.id !== '63' || !/^[0-9A-Fa-f]{4}$/.test(last.value))
    throw new SyntaxError('BR Code must end with field 63 holding a 4-hex-digit CRC');
  const body = code.slice(0, code.length - 4);
  return { fields, crcValid: crc16ccitt(body) === last.value };
}

/** The value at a path of IDs, e.g. ('26', '01') for the Pix key; undefined when absent. */
export function brCodeValue(parsed: ParsedBrCode, ...path: readonly string[]): string | undefined {
  let fields: readonly BrCodeField[] | undefined = parsed.fields;
  let found: BrCodeField | undefined;
  for (const id of path) {
    found = fields?.find((f) => f.id === id);
    if (found === undefined) return undefined;
    fields = found.fields;
  }
  return found?.value;
}
