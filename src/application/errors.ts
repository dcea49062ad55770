/** A build, pipeline or session named by the caller that the store does not hold: the API answers 404. */
export class UnknownTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnknownTargetError';
  }
}
