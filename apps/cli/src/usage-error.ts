/** Thrown by a command for a usage mistake: main prints the message and exits with `code`. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly code = 1,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}
