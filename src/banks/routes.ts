import { Type } from '@sinclair/typebox';
import { signedRoute } from '../auth/signed-route.js';
import { StringEnum } from '../http/validation.js';
import { BANK_LIST_SOURCE, BRAZILIAN_BANKS } from './bank-list.js';

const BankListData = Type.Array(Type.Object({ bankNames: Type.String() }));
const bankNames = BRAZILIAN_BANKS.map((bank) => ({ bankNames: bank.name }));

/** Endpoint 18: the banks a Brazilian bank transfer may name. */
export const bankListRoute = signedRoute({
  method: 'POST',
  path: '/api/v3/bra/query/bank',
  permission: 'query',
  tag: 'Brazil',
  summary: 'List payable Brazilian banks',
  description: `Names accepted as bankName by /api/v3/bra/bank/createTransferOrder. Source: ${BANK_LIST_SOURCE.source}, updated ${BANK_LIST_SOURCE.updated}.`,
  body: Type.Object({
    currencyType: Type.Optional(StringEnum(['BRL'], { description: 'Currency of the transfers; BRL when omitted' })),
  }),
  data: BankListData,
  handle: () => Promise.resolve(bankNames),
});
