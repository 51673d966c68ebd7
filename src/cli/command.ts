// The shape every subcommand file exports; main.ts dispatches on `name`.
export interface CliCommand {
  name: string // e.g. "tenant create"
  usage: string // one line, flags included
  summary: string
  examples: string[]
  run(argv: string[]): Promise<number> | number // exit code: 0 ok, 1 failed, 2 usage
}
