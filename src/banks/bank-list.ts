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
