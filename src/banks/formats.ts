import { defineFormat } from '../http/validation.js';
import { BRAZILIAN_BANKS } from './bank-list.js';

const BANK_NAMES: ReadonlySet<string> = new Set(BRAZILIAN_BANKS.map((bank) => bank.name));

/** A Brazilian account number: 1 to 12 digits, optionally followed by -digit or -X (FieldFormat bankAccount). */
export const BankAccount = defineFormat('bankAccount', (value) => /^\d{1,12}(?:-[0-9Xx])?$/.test(value));

/** A Brazilian branch number of 1 to 4 digits (FieldFormat bankAgency). */
export const BankAgency = defineFormat('bankAgency', (value) => /^\d{1,4}$/.test(value));

/** The name of a bank on the shipped list, exactly as POST /api/v3/bra/query/bank lists it (FieldFormat bankName). */
export const BankName = defineFormat('bankName', (value) => BANK_NAMES.has(value));
