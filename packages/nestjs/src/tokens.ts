import { Inject } from '@nestjs/common';

/** The name of a `BabelQueueModule` registered without one. */
export const DEFAULT_NAME = 'default';

/** The injection token of the `BabelQueueClient` of module `name` (the unnamed one is also injected by its class). */
export function getBabelQueueClientToken(name: string = DEFAULT_NAME): string {
  return `babelqueue:client:${name}`;
}

/** The injection token of the resolved options of module `name`. */
export function getBabelQueueOptionsToken(name: string = DEFAULT_NAME): string {
  return `babelqueue:options:${name}`;
}

/** The injection token of the worker of module `name`. */
export function getBabelQueueWorkerToken(name: string = DEFAULT_NAME): string {
  return `babelqueue:worker:${name}`;
}

/**
 * Injects the `BabelQueueClient` of the module registered with `name`
 * (`constructor(@InjectBabelQueue('payments') private readonly payments: BabelQueueClient)`).
 */
export function InjectBabelQueue(name: string = DEFAULT_NAME): PropertyDecorator & ParameterDecorator {
  return Inject(getBabelQueueClientToken(name));
}
