/** Kenyan mobile numbers (MSISDNs) in the form Daraja takes: 254 + 9-digit number, no + and no leading 0. */

/** 2547… and, since the 2019 01xx ranges, 2541…; the prefix does not decide the operator (number portability). */
const KENYAN_MOBILE = /^254(?:7\d{8}|1\d{8})$/;

/** Whether the value is a Kenyan mobile number in the API's exact form, e.g. 254712345678. */
export function isKenyanMobile(value: string): boolean {
  return KENYAN_MOBILE.test(value);
}

/** The number as payer pages show it, e.g. 2547•••••123: enough to recognise, not enough to harvest. */
export function maskKenyanMobile(value: string): string {
  if (!isKenyanMobile(value))
    throw new RangeError('value must be a Kenyan mobile number in the form 2547XXXXXXXX or 2541XXXXXXXX');
  return `${value.slice(0, 4)}${'•'.repeat(value.length - 7)}${value.slice(-3)}`;
}
