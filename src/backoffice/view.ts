/** Pieces every back-office page writes the same way. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { queryParam } from '../console/router.js';
import { html, type Html } from '../http/html.js';
import { translator } from '../i18n/messages.js';
import type { BackofficeContext, CallOutcome } from './router.js';

/** An action the admin route refused: the page shown again with its message (and the form as sent). */
export interface PageFailure {
  status: number;
  message: string;
  form?: URLSearchParams;
}

/** The error summary at the top of a page: the admin route's refusal, naming the field and the rule. */
export function errorSummary(message: string): Html {
  return html`<div class="summary" role="alert" tabindex="-1"><p class="error">${message}</p></div>`;
}

/**
 * The notice after an action (`?done=<name>` on the page it came back to): only a name the page
 * knows is shown, in the page's words, never the query's text.
 */
export function doneNotice<N extends string>(
  request: FastifyRequest,
  names: readonly N[],
  text: (name: N) => string,
): Html {
  const done = queryParam(request, 'done');
  const name = names.find((n) => n === done);
  return name === undefined ? html`` : html`<p class="notice" role="status">${text(name)}</p>`;
}

/** A read through an admin route that failed: its 403 page, or the route's message as the page. */
export function readFailed(
  ctx: BackofficeContext,
  reply: FastifyReply,
  outcome: Extract<CallOutcome, { ok: false }>,
): FastifyReply {
  if (outcome.forbidden !== undefined) return outcome.forbidden;
  const t = translator('backoffice.router', ctx.lang);
  return ctx.page(reply, {
    status: outcome.status,
    title: t('failed'),
    section: undefined,
    body: html`<h1>${t('failed')}</h1>${errorSummary(outcome.message)}<p><a href="/backoffice">${t('backToToday')}</a></p>`,
  });
}
