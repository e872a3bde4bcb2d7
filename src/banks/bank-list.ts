import data from './br-banks.json' with { type: 'json' };

/** A Brazilian bank or payment institution: COMPE code, ISPB and name. */
export interface Bank {
  code: string;
  ispb: string;
  name: string;
  shortName: string;
}

/** Where the shipped list comes from and when it was last updated. */
export const BANK_LIST_SOURCE = { source: data.source, updated: data.sourceUpdated };

export const BRAZILIAN_BANKS: readonly Bank[] = data.banks;

const byName = new Map(BRAZILIAN_BANKS.map((bank) => [bank.name, bank]));

/** The bank a transfer's `bankName` names, if it is one of the list. */
export function findBankByName(name: string): Bank | undefined {
  return byName.get(name);
}
