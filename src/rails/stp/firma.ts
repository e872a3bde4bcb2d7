/**
 * STP's `firma`: base64 of an RSA PKCS#1 v1.5 SHA-256 signature, made with the company's private key
 * (an encrypted PKCS#8 PEM whose certificate STP holds), over a "cadena original": the request's
 * fields in a fixed order, joined by `|` and framed by `||`. No token: the firma is the whole of
 * STP's authentication. Sources and the verified vector: docs/stp.md.
 */
import { createPrivateKey, sign, verify, type KeyObject } from 'node:crypto';
import { parseDecimal } from '../../money.js';

/** The 34 fields of a payout order's cadena original, in STP's order (stpmex-python `auth.py`). */
export const ORDEN_FIELDNAMES = Object.freeze([
  'institucionContraparte',
  'empresa',
  'fechaOperacion',
  'folioOrigen',
  'claveRastreo',
  'institucionOperante',
  'monto',
  'tipoPago',
  'tipoCuentaOrdenante',
  'nombreOrdenante',
  'cuentaOrdenante',
  'rfcCurpOrdenante',
  'tipoCuentaBeneficiario',
  'nombreBeneficiario',
  'cuentaBeneficiario',
  'rfcCurpBeneficiario',
  'emailBeneficiario',
  'tipoCuentaBeneficiario2',
  'nombreBeneficiario2',
  'cuentaBeneficiario2',
  'rfcCurpBeneficiario2',
  'conceptoPago',
  'conceptoPago2',
  'claveCatUsuario1',
  'claveCatUsuario2',
  'clavePago',
  'referenciaCobranza',
  'referenciaNumerica',
  'tipoOperacion',
  'topologia',
  'usuario',
  'medioEntrega',
  'prioridad',
  'iva',
] as const);

export type OrdenFieldName = (typeof ORDEN_FIELDNAMES)[number];

/** A field's value as a cadena takes it: absent (`''`), text, an integer, or (monto, iva) centavos as a bigint. */
export type CadenaValue = string | number | bigint | undefined | null;

/** Fields STP writes with exactly two decimals. */
const AMOUNT_FIELDS: ReadonlySet<string> = new Set(['monto', 'iva']);

/** Centavos as STP writes an amount: `1.20`, `0.05`, `-3.00`. */
export function formatMonto(centavos: bigint): string {
  const sign = centavos < 0n ? '-' : '';
  const abs = centavos < 0n ? -centavos : centavos;
  return `${sign}${abs / 100n}.${(abs % 100n).toString().padStart(2, '0')}`;
}

/**
 * An amount field in the cadena: a bigint is centavos; a string or a number is pesos in decimal
 * notation (a number by its shortest text, never by float arithmetic), at most 2 decimals, written
 * back with exactly 2. Throws RangeError for anything else.
 */
function amountText(name: string, value: string | number | bigint): string {
  if (typeof value === 'bigint') return formatMonto(value);
  const centavos = parseDecimal(value, 2, { signed: true });
  if (centavos === undefined) throw new RangeError(`${name} is not an amount with at most 2 decimals`);
  return formatMonto(centavos);
}

/**
 * The cadena original of a payout order (`PUT /ordenPago/registra`): `||` + the 34 fields of
 * ORDEN_FIELDNAMES joined by `|` + `||`. An absent field (undefined, null) is empty; `0` stays `0`
 * (the published vector's `prioridad`); `monto` and `iva` are written with two decimals.
 */
export function cadenaOriginalOrden(fields: Readonly<Record<string, CadenaValue>>): string {
  const values = ORDEN_FIELDNAMES.map((name) => {
    const value = Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (value === undefined || value === null) return '';
    if (AMOUNT_FIELDS.has(name) && value !== '') return amountText(name, value);
    return String(value);
  });
  return `||${values.join('|')}||`;
}

/**
 * The cadena of the efws order query (`POST /efws/API/consultaOrden`):
 * `||empresa|claveRastreo|tipoOrden|fechaOperacion||`, the date empty when not sent (stpmex-python
 * `_firma_consulta_efws`).
 */
export function cadenaConsultaOrden(
  empresa: string,
  claveRastreo: string,
  tipoOrden: 'E' | 'R',
  fechaOperacion?: string,
): string {
  return `||${empresa}|${claveRastreo}|${tipoOrden}|${fechaOperacion ?? ''}||`;
}

/**
 * The cadena of the v1 queries of `/ordenPago` (`consOrdEnvRastreo`, `consOrdenesFech`): `|||` empresa
 * `|` fechaOperacion `||` claveRastreo `|` institucionOperante, then 30 `|` (stpmex-python
 * `_firma_consulta`, the form its recorded calls to STP's demo were accepted with).
 */
export function cadenaConsultaRastreo(
  empresa: string,
  query: { fechaOperacion?: string; claveRastreo?: string; institucionOperante?: string | number } = {},
): string {
  const fecha = query.fechaOperacion ?? '';
  const clave = query.claveRastreo ?? '';
  const operante = query.institucionOperante ?? '';
  return `|||${empresa}|${fecha}||${clave}|${String(operante)}${'|'.repeat(30)}`;
}

/**
 * The cadena of the orders-by-date query (`POST /ordenPago/consOrdenesFech {empresa, estado, fechaOperacion?}`).
 *
 * Decision: STP's article is not in the sources; the one client with recorded calls STP's demo
 * answered (stpmex-python `Orden._consulta_fecha`, cassettes `test_consulta_ordenes_*`) signs the
 * v1 query cadena, in which `estado` (E/R) has no place: `|||empresa|fechaOperacion|||` + 30 `|`.
 * That form is used, not a guessed `||empresa|estado|fecha||`; `estado` is taken so the call reads
 * as the request does, and is deliberately not signed.
 */
export function cadenaConsultaFecha(empresa: string, estado: 'E' | 'R', fechaOperacion?: string): string {
  return cadenaConsultaRastreo(empresa, fechaOperacion === undefined ? {} : { fechaOperacion });
}

/** The firma of a cadena: base64 of its RSA PKCS#1 v1.5 SHA-256 signature (UTF-8 bytes). */
export function signCadena(cadena: string, key: KeyObject): string {
  return sign('sha256', Buffer.from(cadena, 'utf8'), key).toString('base64');
}

/** Whether `firma` is a valid signature of the cadena by the holder of `publicKey`'s private key. */
export function verifyFirma(cadena: string, firma: unknown, publicKey: KeyObject): boolean {
  if (typeof firma !== 'string' || !/^[A-Za-z0-9+/]+={0,2}$/.test(firma)) return false;
  try {
    return verify('sha256', Buffer.from(cadena, 'utf8'), publicKey, Buffer.from(firma, 'base64'));
  } catch {
    return false;
  }
}

/**
 * The company's private key from its PEM (an encrypted PKCS#8 as STP issues it, or an unencrypted
 * one), checked to be RSA. The error never repeats the passphrase or the key.
 */
export function loadStpPrivateKey(pem: string, passphrase?: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem', ...(passphrase !== undefined && { passphrase }) });
  } catch (error) {
    const reason = error instanceof Error && 'code' in error ? String(error.code) : 'unreadable';
    throw new Error(`the STP private key could not be read (${reason}): check the PEM file and its passphrase`);
  }
  if (key.asymmetricKeyType !== 'rsa') {
    throw new Error(`the STP private key is ${key.asymmetricKeyType ?? 'of no known type'}, not RSA`);
  }
  return key;
}
