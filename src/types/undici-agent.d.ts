// The type of undici's Agent module, imported by its own path (src/client/transport.ts): undici ships no types for
// its lib/ files, and its Agent class there is the one its index exports.
declare module 'undici/lib/dispatcher/agent.js' {
  import { Agent } from 'undici';
  export default Agent;
}
