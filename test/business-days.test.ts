import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import holidays from '../src/brazil/holidays-br.json' with { type: 'json' };
import {
  HOLIDAY_YEARS,
  boletoDueDate,
  brasiliaDate,
  isBusinessDay,
  nextBusinessDay,
} from '../src/brazil/business-days.js';

const DAY_MS = 86_400_000;
const iso = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** Easter Sunday (epoch ms, 00:00 UTC) by the anonymous Gregorian algorithm (Meeus/Jones/Butcher), written independently of the data. */
function easterSunday(year: number): number {
  const a = year % 19;
  const b = Math.floor(year / 100);
  const c = year % 100;
  const d = Math.floor(b / 4);
  const e = b % 4;
  const f = Math.floor((b + 8) / 25);
  const g = Math.floor((b - f + 1) / 3);
  const h = (19 * a + b - d - g + 15) % 30;
  const i = Math.floor(c / 4);
  const k = c % 4;
  const l = (32 + 2 * e + 2 * i - h - k) % 7;
  const m = Math.floor((a + 11 * h + 22 * l) / 451);
  const month = Math.floor((h + l - 7 * m + 114) / 31);
  const day = ((h + l - 7 * m + 114) % 31) + 1;
  return Date.UTC(year, month - 1, day);
}

/** The last Monday–Friday of the year: FEBRABAN's year-end day without bank service or compensation. */
function lastWeekdayOfYear(year: number): string {
  let ms = Date.UTC(year, 11, 31);
  while (new Date(ms).getUTCDay() === 0 || new Date(ms).getUTCDay() === 6) ms -= DAY_MS;
  return iso(ms);
}

/** Every date the table must hold for a year, with its name: nothing more, nothing less. */
function expectedHolidays(year: number): [string, string][] {
  const easter = easterSunday(year);
  const list: [string, string][] = [
    [`${year}-01-01`, 'Confraternização Universal'],
    [iso(easter - 48 * DAY_MS), 'Carnaval (segunda-feira)'],
    [iso(easter - 47 * DAY_MS), 'Carnaval (terça-feira)'],
    [iso(easter - 2 * DAY_MS), 'Sexta-feira Santa (Paixão de Cristo)'],
    [`${year}-04-21`, 'Tiradentes'],
    [`${year}-05-01`, 'Dia do Trabalho'],
    [iso(easter + 60 * DAY_MS), 'Corpus Christi'],
    [`${year}-09-07`, 'Independência do Brasil'],
    [`${year}-10-12`, 'Nossa Senhora Aparecida'],
    [`${year}-11-02`, 'Finados'],
    [`${year}-11-15`, 'Proclamação da República'],
    [`${year}-11-20`, 'Dia Nacional de Zumbi e da Consciência Negra'],
    [`${year}-12-25`, 'Natal'],
    [lastWeekdayOfYear(year), 'Último dia útil do ano (sem expediente bancário nem compensação)'],
  ];
  return list.sort((x, y) => x[0].localeCompare(y[0]));
}

/** Epoch ms of a Brasília wall-clock time (UTC−3). */
const brasilia = (localDateTime: string): number => Date.parse(`${localDateTime}-03:00`);

const table = holidays.years as Record<string, { date: string; name: string; kind: string }[]>;

describe('Brazilian holiday table (src/brazil/holidays-br.json)', () => {
  it('covers 2026 through 2030', () => {
    assert.deepEqual(HOLIDAY_YEARS, [2026, 2027, 2028, 2029, 2030]);
    assert.deepEqual(Object.keys(table).sort(), ['2026', '2027', '2028', '2029', '2030']);
  });

  it('computes Easter as published (the check the per-year tests rest on)', () => {
    const published = [
      '2026-04-05',
      '2027-03-28',
      '2028-04-16',
      '2029-04-01',
      '2030-04-21',
      '2019-04-21',
      '2038-04-25',
    ];
    assert.deepEqual(
      published.map((date) => iso(easterSunday(Number(date.slice(0, 4))))),
      published,
    );
  });

  for (const year of HOLIDAY_YEARS) {
    it(`${year}: every national and bank holiday at its date, and nothing else`, () => {
      const entries = table[String(year)] ?? [];
      const actual = entries.map((entry): [string, string] => [entry.date, entry.name]);
      assert.deepEqual(actual, expectedHolidays(year), `table for ${year} (sorted by date)`);
      for (const entry of entries) {
        assert.ok(entry.kind === 'national' || entry.kind === 'bank', `${entry.date} kind ${entry.kind}`);
        assert.equal(isBusinessDay(entry.date), false, `${entry.date} ${entry.name} is not a business day`);
      }
    });
  }

  it('2026 matches the FEBRABAN dates announced for the year', () => {
    // Carnival 16–17 Feb, Good Friday 3 Apr, Corpus Christi 4 Jun 2026.
    const dates = new Set((table['2026'] ?? []).map((entry) => entry.date));
    for (const date of ['2026-02-16', '2026-02-17', '2026-04-03', '2026-06-04']) assert.ok(dates.has(date), date);
    assert.ok(!dates.has('2026-02-18'), 'Ash Wednesday is a business day');
    assert.ok(!dates.has('2026-12-24'), 'Dec 24 is a business day');
  });
});

describe('isBusinessDay / nextBusinessDay', () => {
  it('tells weekdays, weekends and holidays apart', () => {
    assert.equal(isBusinessDay('2026-03-04'), true); // Wednesday
    assert.equal(isBusinessDay('2026-03-07'), false); // Saturday
    assert.equal(isBusinessDay('2026-03-08'), false); // Sunday
    assert.equal(isBusinessDay('2026-04-21'), false); // Tiradentes, Tuesday
    assert.equal(isBusinessDay('2026-12-24'), true); // Christmas Eve, Thursday
  });

  it('returns the date itself when it is a business day', () => {
    assert.equal(nextBusinessDay('2026-03-09'), '2026-03-09');
  });

  it('skips a weekend and a holiday Monday', () => {
    assert.equal(nextBusinessDay('2026-09-05'), '2026-09-08'); // Sat → Sun → Mon 7 Sep (Independência) → Tue
  });

  it('crosses into the next year over the year-end day and Jan 1', () => {
    assert.equal(nextBusinessDay('2026-12-31'), '2027-01-04'); // Thu 31 (no compensation) → Fri 1 Jan → weekend → Mon
    assert.equal(nextBusinessDay('2028-12-29'), '2029-01-02'); // 2028's last weekday is Friday 29 Dec
  });

  it('rejects strings that are not calendar dates', () => {
    assert.throws(() => isBusinessDay('2026-02-30'), /not a calendar date/);
    assert.throws(() => isBusinessDay('2026-3-4'), /not a calendar date/);
    assert.throws(() => nextBusinessDay(''), /not a calendar date/);
  });

  it('throws for a year outside the table, naming the file to extend', () => {
    const message = { message: 'no Brazilian holiday table for 2031: add it to src/brazil/holidays-br.json' };
    assert.throws(() => isBusinessDay('2031-03-04'), message);
    assert.throws(() => nextBusinessDay('2030-12-31'), message); // 31 Dec 2030 is listed, so the search reaches 2031
    assert.throws(
      () => isBusinessDay('2025-12-01'),
      /no Brazilian holiday table for 2025: add it to src\/brazil\/holidays-br\.json/,
    );
    assert.throws(() => boletoDueDate(brasilia('2030-12-20T12:00:00'), 30), message);
  });
});

describe('brasiliaDate', () => {
  it('reads the date in Brasília (UTC−3), not UTC', () => {
    assert.equal(brasiliaDate(Date.parse('2026-03-06T02:30:00Z')), '2026-03-05'); // 23:30 on the 5th in Brasília
    assert.equal(brasiliaDate(Date.parse('2026-03-06T02:59:59.999Z')), '2026-03-05');
    assert.equal(brasiliaDate(Date.parse('2026-03-06T03:00:00Z')), '2026-03-06'); // midnight in Brasília
    assert.equal(brasiliaDate(Date.parse('2026-07-15T12:00:00Z')), '2026-07-15'); // no daylight saving time
  });

  it('rejects a non-finite instant', () => {
    assert.throws(() => brasiliaDate(Number.NaN), /not an instant/);
  });
});

describe('boletoDueDate', () => {
  const friday = brasilia('2026-03-06T10:00:00');

  it('a Friday + 3 days lands on Monday; + 1 or + 2 (the weekend) move to Monday', () => {
    assert.equal(boletoDueDate(friday, 3).dueDate, '2026-03-09');
    assert.equal(boletoDueDate(friday, 1).dueDate, '2026-03-09');
    assert.equal(boletoDueDate(friday, 2).dueDate, '2026-03-09');
    assert.equal(boletoDueDate(friday, 0).dueDate, '2026-03-06');
    assert.equal(boletoDueDate(friday, 4).dueDate, '2026-03-10');
  });

  it('a due date on the Friday before a holiday Monday stays; one on the weekend moves past the holiday', () => {
    const thursday = brasilia('2026-09-03T09:00:00');
    assert.equal(boletoDueDate(thursday, 1).dueDate, '2026-09-04'); // Friday before Mon 7 Sep
    assert.equal(boletoDueDate(thursday, 2).dueDate, '2026-09-08'); // Saturday → Tuesday
    assert.equal(boletoDueDate(thursday, 4).dueDate, '2026-09-08'); // the holiday Monday itself → Tuesday
  });

  it('Carnival week: Monday and Tuesday are skipped, Ash Wednesday is due', () => {
    const fridayBefore = brasilia('2026-02-13T15:00:00');
    assert.equal(boletoDueDate(fridayBefore, 3).dueDate, '2026-02-18'); // Carnival Monday → Ash Wednesday
    assert.equal(boletoDueDate(fridayBefore, 4).dueDate, '2026-02-18'); // Carnival Tuesday → Ash Wednesday
    assert.equal(boletoDueDate(fridayBefore, 5).dueDate, '2026-02-18'); // Ash Wednesday itself
    assert.equal(boletoDueDate(fridayBefore, 6).dueDate, '2026-02-19');
  });

  it('a due date on Dec 25 moves to the next business day', () => {
    assert.equal(boletoDueDate(brasilia('2026-12-20T12:00:00'), 5).dueDate, '2026-12-28'); // Fri 25 → Mon 28
    assert.equal(boletoDueDate(brasilia('2027-12-20T12:00:00'), 5).dueDate, '2027-12-27'); // Sat 25 → Mon 27
    assert.equal(boletoDueDate(brasilia('2029-12-20T12:00:00'), 5).dueDate, '2029-12-26'); // Tue 25 → Wed 26
    assert.equal(boletoDueDate(brasilia('2026-12-20T12:00:00'), 4).dueDate, '2026-12-24'); // Dec 24 is due
  });

  it('counts from today in Brasília at 23:30 local (02:30 UTC the next day)', () => {
    const lateThursday = Date.parse('2026-03-06T02:30:00Z'); // Thu 5 Mar, 23:30 in Brasília
    const due = boletoDueDate(lateThursday, 1);
    assert.equal(due.dueDate, '2026-03-06'); // Friday; counting from the UTC date would give Sat 7 → Mon 9
    assert.equal(due.endOfDay, Date.parse('2026-03-07T02:59:59.999Z'));
    assert.equal(boletoDueDate(Date.parse('2026-03-06T03:00:00Z'), 1).dueDate, '2026-03-09'); // Fri 00:00 Brasília + 1
  });

  it('endOfDay is the last millisecond of the due date in Brasília', () => {
    const { dueDate, endOfDay } = boletoDueDate(brasilia('2026-02-13T15:00:00'), 3);
    assert.equal(endOfDay, Date.parse('2026-02-18T23:59:59.999-03:00'));
    assert.equal(brasiliaDate(endOfDay), dueDate);
    assert.equal(brasiliaDate(endOfDay + 1), '2026-02-19');
  });

  it('rejects a negative or fractional number of days', () => {
    assert.throws(() => boletoDueDate(friday, -1), /whole number/);
    assert.throws(() => boletoDueDate(friday, 1.5), /whole number/);
    assert.throws(() => boletoDueDate(friday, Number.NaN), /whole number/);
  });
});
