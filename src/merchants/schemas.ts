import { Type, type Static } from '@sinclair/typebox';
import { IpOrCidr } from '../auth/formats.js';
import { PERMISSION_GRANTS } from '../auth/permissions.js';
import { LANGUAGES } from '../http/language.js';
import { FormattedString, StringEnum } from '../http/validation.js';

export const MerchantLanguage = StringEnum(LANGUAGES, {
  description: 'Language of API messages and the console',
});

export const CreateMerchantBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  language: Type.Optional(MerchantLanguage),
});
export type CreateMerchantBody = Static<typeof CreateMerchantBody>;

const Permissions = Type.Array(StringEnum(PERMISSION_GRANTS), {
  minItems: 1,
  description:
    'Subset of exchange, ken.collection, ken.transfer, bra.collection, bra.transfer, polymerize, query, balance; or all',
});
const IpWhitelist = Type.Union(
  [
    Type.Array(IpOrCidr(), { minItems: 1, maxItems: 100 }),
    Type.String({ minLength: 1, maxLength: 4000, description: 'comma-separated addresses or CIDR ranges' }),
  ],
  { description: 'IPv4/IPv6 addresses or CIDR ranges; 0.0.0.0 allows any address' },
);

export const CreateApiKeyBody = Type.Object({
  permissions: Permissions,
  ipWhitelist: IpWhitelist,
  debug: Type.Optional(Type.Boolean()),
  label: Type.Optional(Type.String({ maxLength: 100 })),
});
export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>;

export const EditApiKeyBody = Type.Object({
  permissions: Type.Optional(Permissions),
  ipWhitelist: Type.Optional(IpWhitelist),
  debug: Type.Optional(Type.Boolean()),
  label: Type.Optional(Type.String({ maxLength: 100 })),
});
export type EditApiKeyBody = Static<typeof EditApiKeyBody>;

/** An http or https callback address. */
export const CallbackUrl = FormattedString('url', { maxLength: 2048 });

export const CallbackAddressBody = Type.Object({
  url: Type.Union([CallbackUrl, Type.Null()]),
});
export type CallbackAddressBody = Static<typeof CallbackAddressBody>;
