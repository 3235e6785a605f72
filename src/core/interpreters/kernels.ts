/**
 * What a language's persistent interpreter is made of in a sandbox: the command that starts the
 * session's kernel once (detached; it prints `previous N` when it replaced one that ended with
 * status N) and the command of one process's client, which speaks the kernel's line protocol on its
 * standard input and output (interpreter.ts).
 */
import { NODE_KERNEL, NODE_SOCKET } from './nodeKernel';
import { NODE_CLIENT, NODE_LAUNCH, NODE_SUPERVISE } from './nodeSupervisor';
import { PYTHON_CLIENT, PYTHON_KERNEL, PYTHON_LAUNCH, PYTHON_SOCKET, PYTHON_SUPERVISE } from './pythonKernel';

export const INTERPRETER_LANGUAGES = ['python', 'node'] as const;
export type InterpreterLanguage = (typeof INTERPRETER_LANGUAGES)[number];

export interface KernelRecipe {
  /** The language in words: "Python". */
  name: string;
  /** The program the sandbox needs, for the error when it lacks it. */
  program: string;
  /** The runtime whose images have it, for what to do next. */
  runtime: string;
  /** How to run the code without the interpreter, for what to do next. */
  oneShot: string;
  launch(stdoutCap: number): string[];
  client(): string[];
}

const RECIPES: Record<InterpreterLanguage, KernelRecipe> = {
  python: {
    name: 'Python',
    program: 'python3',
    runtime: 'python',
    oneShot: 'command (python3 -c ...)',
    launch: (stdoutCap) => [
      'python3',
      '-c',
      PYTHON_LAUNCH,
      PYTHON_SOCKET,
      String(stdoutCap),
      PYTHON_SUPERVISE,
      PYTHON_KERNEL,
    ],
    client: () => ['python3', '-u', '-c', PYTHON_CLIENT, PYTHON_SOCKET],
  },
  node: {
    name: 'Node.js',
    program: 'node',
    runtime: 'node',
    oneShot: 'command (node -e ...)',
    // After --, node passes the arguments to the script rather than reading them as its own options.
    launch: (stdoutCap) => [
      'node',
      '-e',
      NODE_LAUNCH,
      '--',
      NODE_SOCKET,
      String(stdoutCap),
      NODE_SUPERVISE,
      NODE_KERNEL,
    ],
    client: () => ['node', '-e', NODE_CLIENT, '--', NODE_SOCKET],
  },
};

export function kernelRecipe(language: InterpreterLanguage): KernelRecipe {
  return RECIPES[language];
}

export function interpreterName(language: InterpreterLanguage): string {
  return RECIPES[language].name;
}
