import { UFS, type BoletoDetails, type MissingPayerField } from '../brazil/boleto-live.js';
import type { BrazilDetails } from '../brazil/details.js';
import { isValidDocument, normalizeDocument, type DocumentType } from '../brazil/documents.js';
import { html, trusted, type Html } from '../http/html.js';
import type { TextKey, Translate } from './i18n.js';

/** A field of the boleto payer form, and the rule its value broke. */
export type PayerField = 'name' | 'document' | 'street' | 'number' | 'district' | 'city' | 'uf' | 'cep';

const RULE: Record<PayerField, TextKey> = {
  name: 'boletoPayerNameRule',
  document: 'boletoPayerDocumentRule',
  street: 'boletoPayerStreetRule',
  number: 'boletoPayerNumberRule',
  district: 'boletoPayerDistrictRule',
  city: 'boletoPayerCityRule',
  uf: 'boletoPayerUfRule',
  cep: 'boletoPayerCepRule',
};

const LABEL: Record<PayerField, TextKey> = {
  name: 'boletoPayerName',
  document: 'boletoPayerDocument',
  street: 'boletoPayerStreet',
  number: 'boletoPayerNumber',
  district: 'boletoPayerDistrict',
  city: 'boletoPayerCity',
  uf: 'boletoPayerUf',
  cep: 'boletoPayerCep',
};

/** The form's fields for what is missing: the name, the document, the address (all of its lines). */
function fieldsFor(missing: readonly MissingPayerField[]): PayerField[] {
  return missing.flatMap((m): PayerField[] =>
    m === 'address' ? ['street', 'number', 'district', 'city', 'uf', 'cep'] : [m],
  );
}

/**
 * Reads the payer form: each field asked for checked (a person's full name of two words or a
 * company's; a CPF or CNPJ with valid check digits; an address with a known UF and an 8-digit CEP).
 * Returns what to keep in the order's details, or the fields that broke a rule.
 */
export function readPayerForm(
  form: Record<string, string | undefined>,
  missing: readonly MissingPayerField[],
):
  | { given: Pick<BrazilDetails, 'userInfoType' | 'userInfoNo' | 'userInfoName' | 'documentSource'> & BoletoDetails }
  | { problems: PayerField[] } {
  const value = (field: PayerField) => (form[field] ?? '').trim().replace(/\s+/g, ' ');
  const problems: PayerField[] = [];
  const given: Pick<BrazilDetails, 'userInfoType' | 'userInfoNo' | 'userInfoName' | 'documentSource'> & BoletoDetails =
    {};
  let documentType: DocumentType | undefined;
  if (missing.includes('document')) {
    const digits = value('document').replace(/\D/g, '');
    documentType = digits.length === 11 ? 'CPF' : digits.length === 14 ? 'CNPJ' : undefined;
    if (documentType === undefined || !isValidDocument(documentType, digits)) problems.push('document');
    // Entered by the payer: it replaces a document Cashgate generated for an aggregate cashier.
    else
      Object.assign(given, {
        userInfoType: documentType,
        userInfoNo: normalizeDocument(documentType, digits),
        documentSource: 'entered',
      });
  }
  if (missing.includes('name')) {
    const name = value('name');
    // A person's name has a first name and a surname (Efí registers no boleto otherwise).
    if (name.length < 3 || name.length > 100 || (documentType !== 'CNPJ' && !name.includes(' '))) problems.push('name');
    else given.userInfoName = name;
  }
  if (missing.includes('address')) {
    const text = (field: PayerField, max: number, required: boolean) => {
      const v = value(field);
      if ((required && v === '') || v.length > max) problems.push(field);
      return v;
    };
    const street = text('street', 100, true);
    const number = text('number', 10, false);
    const district = text('district', 60, false);
    const city = text('city', 60, true);
    const uf = value('uf').toUpperCase();
    if (!(UFS as readonly string[]).includes(uf)) problems.push('uf');
    const cep = value('cep').replace(/[.\s-]/g, '');
    if (!/^\d{8}$/.test(cep)) problems.push('cep');
    given.payerAddress = {
      street,
      city,
      uf,
      cep,
      ...(number !== '' && { number }),
      ...(district !== '' && { district }),
    };
  }
  return problems.length > 0 ? { problems } : { given };
}

/** The form that asks the payer what the issuer needs before it registers the boleto. */
export function payerFormView(
  t: Translate,
  action: string,
  missing: readonly MissingPayerField[],
  input: Record<string, string | undefined> = {},
  problems: readonly PayerField[] = [],
): Html {
  const fields = fieldsFor(missing);
  const summary =
    problems.length === 0
      ? ''
      : html`<div class="summary" role="alert" tabindex="-1"><p class="error">${t('errorSummary')}</p><ul>${problems.map(
          (p) => html`<li><a href="#payer-${p}">${t(RULE[p])}</a></li>`,
        )}</ul></div>`;
  const field = (name: PayerField) => {
    const invalid = problems.includes(name);
    const error = invalid ? html`<p id="payer-${name}-error" class="error">${t(RULE[name])}</p>` : '';
    const aria = trusted(invalid ? ` aria-invalid="true" aria-describedby="payer-${name}-error"` : '');
    const current = input[name] ?? '';
    if (name === 'uf')
      return html`<label for="payer-uf">${t(LABEL.uf)}</label>${error}<select id="payer-uf" name="uf"${aria}><option value=""></option>${UFS.map(
        (uf) => html`<option${current.toUpperCase() === uf ? trusted(' selected') : ''}>${uf}</option>`,
      )}</select>`;
    const numeric = name === 'document' || name === 'cep';
    return html`<label for="payer-${name}">${t(LABEL[name])}</label>${error}<input type="text" id="payer-${name}" name="${name}"
value="${current}"${trusted(numeric ? ' inputmode="numeric"' : '')} autocomplete="off"${aria}>`;
  };
  return html`<h2>${t('boletoPayerTitle')}</h2><p>${t('boletoPayerIntro')}</p>${summary}<form method="post" action="${action}" novalidate>
${fields.map(field)}<button type="submit">${t('boletoPayerSubmit')}</button></form>`;
}
