// One simulator per test file: started before the file's tests, closed after, and optionally put back to
// healthy before each test. Returns a stand-in that forwards to the running simulator.
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { type Simulator, type SimulatorOptions, startSimulator } from '../../src/simulator/index.ts';

/** Every fault knob back to "healthy". */
export const NO_FAULTS = {
  failRate: 0,
  failFirst: 0,
  rate429: 0,
  resetRate: 0,
  hangRate: 0,
  poison: [] as string[],
  latencyMs: 0,
  jitterMs: 0,
};

/**
 * `each`: 'reset' forgets deliveries and stats and clears the faults before every test; 'faults' only
 * clears the faults; 'none' leaves the simulator as the last test left it.
 * @example const sim = useSimulator({ seed: 7 }, 'reset'); it('…', () => sim.stats())
 */
export function useSimulator(opts: SimulatorOptions, each: 'reset' | 'faults' | 'none' = 'none'): Simulator {
  let current: Simulator | undefined;
  beforeAll(async () => {
    current = await startSimulator(opts);
  });
  afterAll(async () => {
    await current?.close();
  });
  if (each !== 'none') {
    beforeEach(() => {
      if (each === 'reset') current!.reset();
      current!.setFaults(NO_FAULTS);
    });
  }
  return new Proxy({} as Simulator, {
    get(_, key) {
      if (!current) throw new Error('the simulator is used before beforeAll started it');
      const value = Reflect.get(current, key, current);
      return typeof value === 'function' ? value.bind(current) : value;
    },
  });
}
