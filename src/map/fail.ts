// The one failure a converter raises: a message about the value, caught per field by the compiled profile.

/**
 * Thrown by a converter for a value it cannot convert. Not an Error: no stack is captured, so a
 * bad record costs little; it never escapes the mapping module.
 * @example throw new MapFail('expected a decimal amount, got "abc"')
 */
export class MapFail {
  readonly message: string;
  constructor(message: string) {
    this.message = message;
  }
}
