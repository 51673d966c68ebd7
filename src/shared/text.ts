// Text that enters the service must be well-formed Unicode with no NUL. JSON may carry an unpaired
// UTF-16 surrogate as an escape ("\ud800"); JavaScript keeps it, but SQLite stores UTF-8, where it
// has no encoding: the stored text then differs from the text that was hashed, and a hash chain
// over it can never verify again. Refusing such text at the boundary means what is stored, hashed
// and answered is one and the same sequence of code points.
/** A field and what is wrong with it (the shape of problem+json's `errors` items). */
export interface TextFieldProblem {
  field: string
  message: string
}

/** Why `text` cannot be accepted, or undefined when it is fine. */
export function textProblem(text: string): string | undefined {
  if (!text.isWellFormed()) return 'must be well-formed Unicode text (it holds an unpaired UTF-16 surrogate)'
  if (text.includes('\0')) return 'must not contain the NUL character (U+0000)'
  return undefined
}

/**
 * Every string in a parsed JSON value, object keys included, checked iteratively (a 64 KiB body
 * of nested arrays would overflow a recursive walk). Returns the first problem found, named by the
 * path a client would use (`reason`, `scopes[2]`, `parameters.fast`).
 *
 * @example
 * findTextProblem(JSON.parse('{"reason":"\\ud800"}')) // { field: 'reason', message: 'must be well-formed ...' }
 */
export function findTextProblem(value: unknown): TextFieldProblem | undefined {
  const stack: [unknown, string][] = [[value, '']]
  while (stack.length) {
    const [item, path] = stack.pop()!
    if (typeof item === 'string') {
      const message = textProblem(item)
      if (message) return { field: path || 'body', message }
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push([item[i], `${path || 'body'}[${i}]`])
    } else if (item !== null && typeof item === 'object') {
      const entries = Object.entries(item)
      for (const [key] of entries) {
        const message = textProblem(key)
        // The key itself is the problem: name it by its path with the bad characters escaped.
        if (message) return { field: JSON.stringify(path ? `${path}.${key}` : key).slice(1, -1), message: `field name ${message}` }
      }
      for (let i = entries.length - 1; i >= 0; i--) stack.push([entries[i][1], path ? `${path}.${entries[i][0]}` : entries[i][0]])
    }
  }
  return undefined
}
