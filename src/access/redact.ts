/**
 * What the audit log and a masked reader never see: secrets are replaced, personal data is masked
 * as the merchant console masks it (the end of a phone or account number, the start and end of a
 * document), by the field names that carry them in Cashgate's data.
 */

const SECRET = /secret|password|passkey|privatekey|private_key|credential|^totp|sealed|hash$|^bearer/i;
const PHONE = /phone|msisdn|mobile/i;
const DOCUMENT = /document|cpf|cnpj|taxid|tax_id|rfc|curp|userInfoNo|personId/i;
// STP's (SPEI) fields: the sender's and the beneficiary's accounts and names.
const ACCOUNT =
  /^(account|accountId|accountNo|accountNumber|account_number|bankAccount|clabe|iban|payeeAccount|payerAccount|pixKey|cuenta(Ordenante|Beneficiario)2?)$/i;
const NAME =
  /^(payerName|payeeName|personName|userInfoName|accountName|holderName|customerName|payer_name|payee_name|oxxoName|nombre(Ordenante|Beneficiario)2?)$/i;
/** A payer's email (an OXXO voucher's): its first character and its domain shown. */
const EMAIL = /^(oxxoEmail|payerEmail)$/i;

export const REDACTED = '[redacted]';

/** A value with `head` characters kept at its start and `tail` at its end, the rest as dots. */
export function keepEnds(value: string, head: number, tail: number): string {
  const chars = Array.from(value);
  if (chars.length <= head + tail) return '•'.repeat(chars.length);
  return `${chars.slice(0, head).join('')}${'•'.repeat(chars.length - head - tail)}${chars.slice(chars.length - tail).join('')}`;
}

/** A personal value masked by the kind its field name says, or undefined when the field is not personal. */
function maskField(key: string, value: string): string | undefined {
  if (PHONE.test(key)) return keepEnds(value, 0, 3);
  if (DOCUMENT.test(key)) return keepEnds(value, 3, 2);
  if (ACCOUNT.test(key)) return keepEnds(value, 0, 4);
  if (NAME.test(key)) return keepEnds(value, 1, 0);
  if (EMAIL.test(key)) {
    const at = value.lastIndexOf('@');
    return at < 0 ? keepEnds(value, 1, 0) : `${keepEnds(value.slice(0, at), 1, 0)}${value.slice(at)}`;
  }
  return undefined;
}

function walk(value: unknown, onString: (key: string, value: string) => string | undefined, key = ''): unknown {
  if (Array.isArray(value)) return value.map((item) => walk(item, onString, key));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, onString, k)]));
  }
  if (typeof value === 'string' || typeof value === 'number') return onString(key, String(value)) ?? value;
  // An amount read by a rail's client (centavos) is kept as its digits: JSON has no bigint.
  if (typeof value === 'bigint') return onString(key, value.toString()) ?? value.toString();
  return value;
}

/** Personal data masked, for a reader without `personal_data.read`. */
export function maskPersonalData(value: unknown): unknown {
  return walk(value, (key, text) => maskField(key, text));
}

/** Secrets replaced and personal data masked: what an audit record may keep of a change. */
export function redactForAudit(value: unknown): unknown {
  return walk(value, (key, text) => (SECRET.test(key) ? REDACTED : maskField(key, text)));
}
