import { defineFormat } from '../http/validation.js';
import { isKenyanMobile } from './phone.js';

/** A Kenyan mobile number in the API's exact form, e.g. 254712345678 (FieldFormat kenyanMobile). */
export const KenyanMobile = defineFormat('kenyanMobile', isKenyanMobile);
