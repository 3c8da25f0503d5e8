// Input that common code (render options, positions, presets, URL rules) refuses. The coordinator
// answers it as a 400 with the message (coordinator/src/errors.ts appErrorOf); the agent, which parses
// the same options again, fails the task with it.
export class InvalidInput extends Error {
  override readonly name = 'InvalidInput';
}

export const invalidInput = (message: string): InvalidInput => new InvalidInput(message);
