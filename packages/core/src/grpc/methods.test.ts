import { describe, expect, it } from 'vitest';
import { compileSelector, idempotentMethods } from './methods.js';

// What proto-loader's loadSync gives for `package hello; service Greeter { … }`.
const packageDefinition = {
  'hello.Greeter': {
    SayHello: { path: '/hello.Greeter/SayHello', options: { idempotency_level: 'IDEMPOTENT' } },
    CreateGreeting: { path: '/hello.Greeter/CreateGreeting', options: {} },
  },
  'hello.HelloRequest': { format: 'Protocol Buffer 3 DescriptorProto' },
};

describe('compileSelector', () => {
  it('matches full paths and service names', () => {
    const selects = compileSelector('idempotent', ['/hello.Greeter/SayHello', 'shop.Catalog']);
    expect(selects('/hello.Greeter/SayHello')).toBe(true);
    expect(selects('/shop.Catalog/List')).toBe(true);
    expect(selects('/hello.Greeter/CreateGreeting')).toBe(false);
  });

  it('rejects names no method path can have, naming the entry and the accepted forms', () => {
    expect(() => compileSelector('idempotent', ['SayHello'])).toThrow(
      `idempotent[0] is "SayHello", which matches no method: give a full method path ('/pkg.Service/Method') or a service name ('pkg.Service'), e.g. "/pkg.Service/SayHello"`,
    );
    expect(() => compileSelector('idempotent', new Set(['hello.Greeter/SayHello']))).toThrow(
      `idempotent[0] is "hello.Greeter/SayHello", which matches no method: a full method path starts with '/' — did you mean "/hello.Greeter/SayHello"?`,
    );
    expect(() => compileSelector('idempotent', ['/hello.Greeter/SayHello/'])).toThrow(TypeError);
    expect(() => compileSelector('idempotent', [42 as never])).toThrow(TypeError);
  });

  it('rejects a bare string (which iterates its characters) where a list is expected', () => {
    // @ts-expect-error a string is not a list of selectors
    expect(() => compileSelector('idempotent', 'hello.Greeter')).toThrow(
      /idempotent must be 'all', a function, or an array or set of method paths/,
    );
  });
});

describe('idempotentMethods', () => {
  it('reads the marked methods, and adds the ones `also` selects', () => {
    expect([...idempotentMethods(packageDefinition)]).toEqual(['/hello.Greeter/SayHello']);
    expect([...idempotentMethods(packageDefinition, ['hello.Greeter'])]).toEqual([
      '/hello.Greeter/SayHello',
      '/hello.Greeter/CreateGreeting',
    ]);
  });

  it('throws for an `also` entry that matches no method of the definition', () => {
    expect(() => idempotentMethods(packageDefinition, ['/hello.Greeter/SayHi'])).toThrow(
      'idempotentMethods: also[0] is "/hello.Greeter/SayHi", which matches no method of the definition (its services: hello.Greeter)',
    );
    expect(() => idempotentMethods(packageDefinition, ['SayHello'])).toThrow(
      /idempotentMethods: also\[0\] is "SayHello", which matches no method/,
    );
  });

  it('reads a ts-proto service definition, whose methods carry no path', () => {
    const definition = {
      name: 'Greeter',
      fullName: 'hello.Greeter',
      methods: {
        sayHello: { name: 'SayHello', options: { idempotencyLevel: 'NO_SIDE_EFFECTS' } },
        createGreeting: { name: 'CreateGreeting', options: {} },
      },
    };
    expect([...idempotentMethods(definition, ['/hello.Greeter/CreateGreeting'])]).toEqual([
      '/hello.Greeter/SayHello',
      '/hello.Greeter/CreateGreeting',
    ]);
  });
});
