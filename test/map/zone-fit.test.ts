// Issue 50, Must 3: a profile's own zone for a place (`"states"`) must fit the place: a country's entry one of its
// zones, a state's entry one of that state's where the tool's table covers the country, every key a real country or
// state. Refused at load (MAPPING_INVALID) naming the entry and the zones that would fit.
import { describe, expect, it } from 'vitest';
import { compileProfile } from '../../src/map/compile.ts';
import { zoneMisfit } from '../../src/map/zone-fit.ts';
import { CONST_RULES } from '../helpers/profiles.ts';

const withStates = (states: Record<string, string>) => ({
  fields: {
    ...CONST_RULES,
    transactionTimestamp: {
      from: 'local_time',
      timestamp: {
        format: 'YYYY-MM-DD HH:mm:ss',
        zone: { country: 'merchant.country', state: 'merchant.state', states },
      },
    },
  },
});
const load = (states: Record<string, string>) => () => compileProfile(withStates(states), 'p.json', 'p');

describe('a zone choice must fit the place it names', () => {
  it('"GB": "Asia/Tokyo", "CA-ON": "America/Vancouver" and "XX-99" are refused at load, naming the entry', () => {
    expect(load({ GB: 'Asia/Tokyo' })).toThrow(
      'fields.transactionTimestamp.timestamp.zone.states.GB: expected a zone of the place its key names (Asia/Tokyo is not a zone of GB (Europe/London)), got "Asia/Tokyo"',
    );
    expect(load({ 'CA-ON': 'America/Vancouver' })).toThrow(
      'states.CA-ON: expected a zone of the place its key names (America/Vancouver is not a zone of CA-ON (America/Toronto, America/Winnipeg, America/Panama))',
    );
    expect(load({ 'XX-99': 'UTC' })).toThrow(
      'states.XX-99: expected a zone of the place its key names (XX is not an ISO 3166 country code)',
    );
    expect(load({ 'US-ZZ': 'America/Chicago' })).toThrow('ZZ is not a state or province of US');
    expect(load({ 'US-TX': 'Europe/London' })).toThrow(
      'Europe/London is not a zone of US-TX (America/Chicago, America/Denver)',
    );
  });

  it("choices that fit are accepted: a state's own zone, a link to it, a country's zone, a zone shared across a border", () => {
    expect(
      load({ 'US-TX': 'America/Chicago', 'CA-ON': 'America/Toronto', ES: 'Europe/Madrid' }),
    ).not.toThrow();
    expect(zoneMisfit('US-TX', 'US/Central')).toBeUndefined();
    // Büsingen (DE) keeps Zurich's time; the Canary Islands (ES-CN: Spain has no state table) are Spain's.
    expect(zoneMisfit('DE', 'Europe/Zurich')).toBeUndefined();
    expect(zoneMisfit('ES-CN', 'Atlantic/Canary')).toBeUndefined();
    expect(zoneMisfit('IN', 'Asia/Calcutta')).toBeUndefined();
  });
});
