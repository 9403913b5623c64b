// Question-title presets. Column names are where connectors break on real exports: non-ASCII
// letters in a Norwegian or German quest, and long titles that collide once a destination cuts
// identifiers (Postgres at 63 bytes). Each preset also names the choice labels, so TEXT exports
// and expanded multiple-choice columns are in the same language as the titles.

import type {QuestionKind} from './questions';
import {TitlePreset} from './types';

/** Builds a title (and choice options) for the question in column `n` (1-based). */
export type Template = (n: number) => {title: string; options?: readonly string[]};

export interface Preset {
  templates: Readonly<Record<QuestionKind, readonly Template[]>>;
  ratingLabels: readonly string[];
  /** Last option of a single choice that has an "other" column after it. */
  otherLabel: string;
  /** Title for a template used a second time in one layout, so the header stays unique. */
  repeat: (title: string, n: number) => string;
}

const ENGLISH: Preset = {
  templates: {
    rating: [
      (n) => ({title: `Q${n}. How satisfied are you? (1-5)`}),
      (n) => ({title: `Q${n}. How likely is it that you'd recommend us? (1-5)`}),
      (n) => ({title: `Q${n}. Rate our support: speed, tone & result (1-5)`}),
    ],
    text: [
      (n) => ({title: `Q${n} | Comments, "free text"`}),
      (n) => ({title: `Q${n} | What could we do better? (optional)`}),
      (n) => ({title: `Q${n} | Anything else; "anything" at all?`}),
    ],
    multi: [
      (n) => ({title: `Q${n} Favourite colours`, options: ['Red', 'Blue', 'Green', 'Yellow', 'Light grey']}),
      (n) => ({
        title: `Q${n} Which features do you use?`,
        options: ['Dashboards', 'Reports', 'E-mail alerts', 'API access', 'Mobile app'],
      }),
    ],
    single: [
      (n) => ({
        title: `Q${n} How did you hear about us?`,
        options: ['Friend or colleague', 'Web search', 'Newspaper / magazine'],
      }),
      (n) => ({title: `Q${n} Preferred contact channel`, options: ['E-mail', 'Phone', 'Letter (post)']}),
    ],
    other: [(n) => ({title: `Q${n} Other`})],
    date: [
      (n) => ({title: `Q${n} Date of last visit (yyyy-mm-dd)`}),
      (n) => ({title: `Q${n} When did you start? [date]`}),
    ],
    number: [(n) => ({title: `Q${n} Number of employees`}), (n) => ({title: `Q${n} Budget, in EUR (approx.)`})],
  },
  ratingLabels: ['Very dissatisfied', 'Dissatisfied', 'Neutral', 'Satisfied', 'Very satisfied'],
  otherLabel: 'Other (please specify)',
  // English titles carry their column number, so they never repeat.
  repeat: (title) => title,
};

// Norwegian and German titles are written as such surveys are: without a question number. They
// stay within Latin-1 (« » instead of typographic quotes) so that a latin1 file keeps them intact.
const NORWEGIAN: Preset = {
  templates: {
    rating: [
      () => ({title: 'Hvor fornøyd er du med kundeservicen? (1-5)'}),
      () => ({title: 'Hvor sannsynlig er det at du vil anbefale oss til en venn? (1-5)'}),
      () => ({title: 'Hvordan vurderer du åpningstidene våre? (1-5)'}),
    ],
    text: [
      () => ({title: 'Kommentarer til «gjennomføring», fritekst'}),
      () => ({title: 'Hva kan vi gjøre bedre? (valgfritt)'}),
      () => ({title: 'Har du andre innspill til oss?'}),
    ],
    multi: [
      () => ({
        title: 'Hvilke områder bør kommunen prioritere?',
        options: ['Økonomi', 'Skole og barnehage', 'Helse og omsorg', 'Miljø', 'Kultur og fritid'],
      }),
      () => ({
        title: 'Hvilke tjenester har du brukt det siste året?',
        options: ['Nettbank', 'Mobilbank', 'Rådgivning på kontoret', 'Kundeservice på telefon', 'Chat'],
      }),
    ],
    single: [
      () => ({title: 'Jobber du hjemmefra?', options: ['Ja', 'Nei', 'Både og']}),
      () => ({title: 'Hvordan fikk du vite om oss?', options: ['Venn eller kollega', 'Søk på nettet', 'Avis / blad']}),
    ],
    other: [() => ({title: 'Annet, nemlig'})],
    date: [() => ({title: 'Dato for siste besøk (åååå-mm-dd)'}), () => ({title: 'Når ble du kunde hos oss?'})],
    number: [() => ({title: 'Antall ansatte i bedriften'}), () => ({title: 'Årlig budsjett i kroner (ca.)'})],
  },
  ratingLabels: ['Svært misfornøyd', 'Misfornøyd', 'Verken eller', 'Fornøyd', 'Svært fornøyd'],
  otherLabel: 'Annet (vennligst spesifiser)',
  repeat: (title, n) => `${title} (spørsmål ${n})`,
};

const GERMAN: Preset = {
  templates: {
    rating: [
      () => ({title: 'Wie zufrieden sind Sie mit unserem Kundenservice?'}),
      () => ({title: 'Wie wahrscheinlich ist es, dass Sie uns weiterempfehlen? (1-5)'}),
      () => ({title: 'Wie bewerten Sie unsere Öffnungszeiten? (1-5)'}),
    ],
    text: [
      () => ({title: 'Ihre Anmerkungen zur »Durchführung«, Freitext'}),
      () => ({title: 'Was können wir besser machen? (optional)'}),
      () => ({title: 'Möchten Sie uns sonst noch etwas mitteilen?'}),
    ],
    multi: [
      () => ({
        title: 'Welche Funktionen nutzen Sie regelmäßig?',
        options: ['Übersichten', 'Berichte', 'E-Mail-Benachrichtigungen', 'Schnittstelle (API)', 'Mobile App'],
      }),
      () => ({
        title: 'Welche Themen sind Ihnen wichtig?',
        options: ['Qualität', 'Größe des Sortiments', 'Preis', 'Umweltschutz', 'Service'],
      }),
    ],
    single: [
      () => ({title: 'Größe des Unternehmens', options: ['Klein (1-49)', 'Mittel (50-249)', 'Groß (ab 250)']}),
      () => ({title: 'Wie haben Sie von uns erfahren?', options: ['Freunde oder Kollegen', 'Suchmaschine', 'Zeitung']}),
    ],
    other: [() => ({title: 'Sonstiges, und zwar'})],
    date: [() => ({title: 'Datum des letzten Besuchs (JJJJ-MM-TT)'}), () => ({title: 'Seit wann sind Sie Kunde?'})],
    number: [() => ({title: 'Anzahl der Beschäftigten'}), () => ({title: 'Jährliches Budget in Euro (ca.)'})],
  },
  ratingLabels: ['Sehr unzufrieden', 'Unzufrieden', 'Weder noch', 'Zufrieden', 'Sehr zufrieden'],
  otherLabel: 'Sonstiges (bitte angeben)',
  repeat: (title, n) => `${title} (Frage ${n})`,
};

// Every long title starts with the same 75 characters and carries its number near the end: unique
// in full (80-150 characters), identical once cut at 63, and so are the expanded columns
// `<title>: <option>` of a multiple choice.
const LONG_PREFIX = 'Thinking about your most recent experience with our customer service team, ';
const long = (rest: string): string => LONG_PREFIX + rest;

const LONG: Preset = {
  templates: {
    rating: [
      (n) => ({title: long(`how satisfied were you with the outcome overall? (Q${n}, 1-5)`)}),
      (n) => ({title: long(`how likely are you to recommend us to a colleague? (Q${n}, 1-5)`)}),
      (n) => ({title: long(`how would you rate the speed, tone and result of the support? (Q${n}, 1-5)`)}),
    ],
    text: [
      (n) => ({title: long(`what, if anything, could we have done better? (Q${n}, free text)`)}),
      (n) => ({title: long(`is there anything else you would like to tell us? (Q${n}, optional)`)}),
    ],
    multi: [
      (n) => ({
        title: long(`which channels did you use to reach us? (Q${n}, several answers possible)`),
        options: ['E-mail', 'Phone', 'Chat', 'Contact form', 'Social media'],
      }),
      (n) => ({
        title: long(`which of our products were involved? (Q${n}, several answers possible)`),
        options: ['Surveys', 'Reports', 'Dashboards', 'API', 'Mobile app'],
      }),
    ],
    single: [
      (n) => ({
        title: long(`how did you first hear about us? (Q${n}, one answer)`),
        options: ['Friend or colleague', 'Web search', 'Advertisement'],
      }),
      (n) => ({
        title: long(`which contact channel would you prefer next time? (Q${n})`),
        options: ['E-mail', 'Phone', 'Letter'],
      }),
    ],
    other: [(n) => ({title: long(`other, please specify in your own words (Q${n})`)})],
    date: [(n) => ({title: long(`on which date did you last contact us? (Q${n}, yyyy-mm-dd)`)})],
    number: [(n) => ({title: long(`how many times did you contact us in the last year? (Q${n})`)})],
  },
  ratingLabels: ENGLISH.ratingLabels,
  otherLabel: ENGLISH.otherLabel,
  repeat: (title) => title,
};

export const PRESETS: Readonly<Record<TitlePreset, Preset>> = {
  english: ENGLISH,
  norwegian: NORWEGIAN,
  german: GERMAN,
  long: LONG,
};
