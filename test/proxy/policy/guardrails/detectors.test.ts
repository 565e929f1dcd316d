import { describe, expect, test } from 'bun:test'
import {
  compileFilters,
  FilterError,
  hasFilters,
  inspectText,
  type Filter,
} from '../../../../proxy/policy/guardrails/detectors.ts'
import type { DetectorName } from '../../../../proxy/policy/guardrails/scan.ts'

/** The text after one redact filter of `detector`; matches show as `[REDACTED:<detector>]`. */
function redactWith(detector: DetectorName, text: string, extra: Partial<Filter> = {}): string {
  return inspectText(text, compileFilters([{ detector, action: 'redact', ...extra }])).text
}

/** Runs a table of [input, expected output] through one detector; `-` as output means unchanged. */
function table(detector: DetectorName, rows: [string, string][], extra: Partial<Filter> = {}) {
  for (const [input, expected] of rows) {
    test(`${JSON.stringify(input)} → ${expected === '-' ? 'unchanged' : JSON.stringify(expected)}`, () => {
      expect(redactWith(detector, input, extra)).toBe(expected === '-' ? input : expected)
    })
  }
}

// Secret-looking fixtures are assembled at run time so that secret scanners do not flag this file.
const fake = {
  aws: 'AKIA' + 'IOSFODNN7EXAMPLE',
  github: 'ghp_' + 'aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A',
  githubPat: 'github_pat_' + '11ABCDEFG0123456789abc_' + 'x'.repeat(59),
  slack: 'xoxb-' + '1234567890-abcdefABCDEF',
  stripe: 'sk_' + 'live_' + '4eC39HqLyjWDarjtT1zdp7dc',
  openai: 'sk-' + 'aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A7c9E1g3',
  openaiProject: 'sk-' + 'proj-' + 'Ab12_Cd34-Ef56Gh78Ij90Kl12Mn34',
  anthropic: 'sk-' + 'ant-api03-' + 'Ab12Cd34Ef56Gh78Ij90Kl12Mn34',
  google: 'AIza' + 'SyA1234567890abcdefghijklmnopqrstuv',
  jwt:
    'eyJ' +
    'hbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
  gateway: 'svc-' + 'live-' + '7Ex9kQ2mZbV5pR8sT3wY6uN4cD',
  pem:
    '-----BEGIN RSA ' +
    'PRIVATE KEY-----\nMIIEowIBAAKCAQEAx4o3zhxJ8dmiA7Y8bK2n\nq9Zs1Xw8Vb6Yc3Te5Rf7\nQw==\n-----END RSA ' +
    'PRIVATE KEY-----',
}

describe('email detector', () => {
  table('email', [
    ['write to jane.doe+tag@mail.example.co.uk today', 'write to [REDACTED:email] today'],
    ['<a_b@x.io>', '<[REDACTED:email]>'],
    ['😀 bob@example.com.', '😀 [REDACTED:email].'],
    ['user@localhost', '-'],
    ['a@b.c', '-'],
    ['follow @handle', '-'],
  ])
})

describe('phone detector', () => {
  table('phone', [
    ['call +1 415-555-0132.', 'call [REDACTED:phone].'],
    ['call (415) 555-0132', 'call [REDACTED:phone]'],
    ['+44 20 7946 0958', '[REDACTED:phone]'],
    ['415.555.0132', '[REDACTED:phone]'],
    ['415-555-0132 or 415 555 0132', '[REDACTED:phone] or [REDACTED:phone]'],
    ['+14155550132', '[REDACTED:phone]'],
    ['+1 (415) 555-0132', '[REDACTED:phone]'],
    ['UK 020 7946 0958', 'UK [REDACTED:phone]'],
    ['on 2024-05-01 at 10:30', '-'],
    ['version 1.2.3 and 10.15.7', '-'],
    ['order 12345 and 4155550132', '-'],
    ['ext 555-0132', '-'],
    ['10.0.0.1', '-'],
    ['01-05-2024 and 05 01 2024', '-'],
    ['+1 23', '-'],
    ['415-555-01325', '-'],
  ])
})

describe('credit card detector', () => {
  table('credit_card', [
    ['card 4111 1111 1111 1111', 'card [REDACTED:credit_card]'],
    ['4111-1111-1111-1111', '[REDACTED:credit_card]'],
    ['4111111111111111,', '[REDACTED:credit_card],'],
    ['amex 3782 822463 10005', 'amex [REDACTED:credit_card]'],
    ['5500 0000 0000 0004 cvv 123', '[REDACTED:credit_card] cvv 123'],
    ['4111 1111 1111 1111 123', '[REDACTED:credit_card] 123'],
    ['call 415 555 0132 4111 1111 1111 1111', 'call 415 555 0132 [REDACTED:credit_card]'],
    ['card 4111 1111 1111 1112', '-'],
    ['4111111111111112', '-'],
    ['id 1234567812345678', '-'],
    ['short 4111 1111 1111', '-'],
    ['x4111111111111111', '-'],
    ['pi 3.4111111111111111', '-'],
  ])
})

describe('IBAN detector', () => {
  table('iban', [
    ['pay DE89 3704 0044 0532 0130 00 now', 'pay [REDACTED:iban] now'],
    ['GB82WEST12345698765432', '[REDACTED:iban]'],
    ['GB82 WEST 1234 5698 7654 32', '[REDACTED:iban]'],
    ['FR14 2004 1010 0505 0001 3M02 606', '[REDACTED:iban]'],
    ['NL91 ABNA 0417 1643 00 FROM ME', '[REDACTED:iban] FROM ME'],
    ['DE88 3704 0044 0532 0130 00', '-'],
    ['GB82WEST12345698765433', '-'],
    ['AB12 CDEF', '-'],
    ['XGB82WEST12345698765432', '-'],
  ])
})

describe('US SSN detector', () => {
  table('us_ssn', [
    ['ssn 123-45-6789', 'ssn [REDACTED:us_ssn]'],
    ['123 45 6789', '[REDACTED:us_ssn]'],
    ['000-12-3456', '-'],
    ['666-12-3456', '-'],
    ['900-12-3456 987-65-4321', '-'],
    ['123-00-4567', '-'],
    ['123-45-0000', '-'],
    ['1123-45-6789', '-'],
    ['123-45-67890', '-'],
  ])
})

describe('IP address detector', () => {
  table('ip_address', [
    ['host 10.0.0.1', 'host [REDACTED:ip_address]'],
    ['255.255.255.255', '[REDACTED:ip_address]'],
    ['192.168.1.1:8080', '[REDACTED:ip_address]:8080'],
    ['2001:db8::1', '[REDACTED:ip_address]'],
    ['2001:0db8:85a3:0000:0000:8a2e:0370:7334', '[REDACTED:ip_address]'],
    ['[::1]:443', '[[REDACTED:ip_address]]:443'],
    ['fe80::1%eth0', '[REDACTED:ip_address]%eth0'],
    ['::ffff:192.0.2.1', '[REDACTED:ip_address]'],
    ['999.1.1.1', '-'],
    ['256.1.1.1', '-'],
    ['1.2.3.4.5', '-'],
    ['version 1.2.3', '-'],
    ['std::vector and a::b', '-'],
    ['12:30:45', '-'],
    ['00:1A:2B:3C:4D:5E', '-'],
  ])
})

describe('secret detector', () => {
  const rows: [string, string][] = Object.entries(fake).map(([kind, value]) => [
    `${kind}: ${value} end`,
    `${kind}: [REDACTED:secret] end`,
  ])
  table('secret', [
    ...rows,
    [`${fake.pem}\nthanks`, '[REDACTED:secret]\nthanks'],
    ['-----BEGIN PRIVATE KEY----- is the header line', '[REDACTED:secret] is the header line'],
    ['AKIA1234', '-'],
    [`${fake.aws}X`, '-'],
    ['ghp_short', '-'],
    ['sk-learn-documentation-page-here', '-'],
    ['task-management-1234567890-overview', '-'],
    ['eyJhbGciOiJIUzI1NiJ9 alone', '-'],
    ['svc-live-0000000000000000000000000O', '-'],
  ])
})

describe('regex detector', () => {
  table('regex', [['PROJECT  Zeus is live', '[REDACTED:regex] is live']], {
    pattern: String.raw`(?i)project\s+zeus`,
  })
  table(
    'regex',
    [
      ['zeus stays', '-'],
      ['Zeus goes', '[REDACTED:regex] goes'],
    ],
    { pattern: 'Zeus' },
  )

  test('a pattern with more matches than the search cap redacts the rest of the text (fails closed)', () => {
    const out = redactWith('regex', 'a'.repeat(300), { pattern: 'a' })
    expect(out.split('[REDACTED:regex]').join('')).toBe('')
    expect(out.split('[REDACTED:regex]')).toHaveLength(258)
  })
})

describe('keywords detector', () => {
  table(
    'keywords',
    [
      ['this is CONFIDENTIAL.', 'this is [REDACTED:keywords].'],
      ['Project Zeus ships', '[REDACTED:keywords] ships'],
      ['concatenate', '-'],
      ['a cat here', 'a [REDACTED:keywords] here'],
      ['a.b and axb', '[REDACTED:keywords] and axb'],
      ['I like C++ a lot', 'I like [REDACTED:keywords] a lot'],
      ['costs $100 (hi)', 'costs [REDACTED:keywords] [REDACTED:keywords]'],
    ],
    { keywords: ['confidential', 'project zeus', 'cat', 'a.b', 'c', 'c++', '$100', '(hi)'] },
  )
})

describe('inspectText', () => {
  const email = 'jane@example.com'
  const text = `mail ${email} or ${fake.stripe}`

  test('a block filter blocks, names the filter and returns the text unchanged', () => {
    const compiled = compileFilters([
      { detector: 'email', action: 'redact' },
      { detector: 'secret', action: 'block', name: 'no keys' },
      { detector: 'email', action: 'block' },
    ])
    expect(inspectText(text, compiled)).toEqual({
      blocked: { detector: 'no keys', action: 'block' },
      text,
      redacted: [],
    })
  })

  test('redact filters rewrite every match and report one finding per filter, with its matches', () => {
    const compiled = compileFilters([
      { detector: 'email', action: 'redact' },
      { detector: 'secret', action: 'redact', name: 'api key' },
      { detector: 'phone', action: 'redact' },
    ])
    const result = inspectText(`${text} and again ${email}`, compiled)
    expect(result.text).toBe(
      'mail [REDACTED:email] or [REDACTED:api key] and again [REDACTED:email]',
    )
    expect(result.redacted).toEqual([
      { detector: 'email', action: 'redact', count: 2 },
      { detector: 'api key', action: 'redact', count: 1 },
    ])
    expect(result.blocked).toBeUndefined()
  })

  test('findings never carry the matched text', () => {
    const blocked = inspectText(text, compileFilters([{ detector: 'email', action: 'block' }]))
    const redacted = inspectText(
      text,
      compileFilters([
        { detector: 'email', action: 'redact' },
        { detector: 'secret', action: 'redact' },
      ]),
    )
    for (const findings of [blocked.blocked, redacted.redacted]) {
      const json = JSON.stringify(findings)
      expect(json).not.toContain(email)
      expect(json).not.toContain(fake.stripe)
      expect(json).not.toContain('jane')
    }
  })

  test('overlapping spans of several filters become one marker, labelled by the earlier filter', () => {
    const compiled = compileFilters([
      {
        detector: 'regex',
        action: 'redact',
        pattern: String.raw`card [0-9]{4}`,
        name: 'card mention',
      },
      { detector: 'credit_card', action: 'redact' },
    ])
    const result = inspectText('my card 4111 1111 1111 1111 ok', compiled)
    expect(result.text).toBe('my [REDACTED:card mention] ok')
    expect(result.redacted.map((finding) => finding.detector)).toEqual([
      'card mention',
      'credit_card',
    ])
  })

  test('a later filter does not see the markers of an earlier one', () => {
    const compiled = compileFilters([
      { detector: 'email', action: 'redact' },
      { detector: 'keywords', action: 'redact', keywords: ['redacted', 'email'] },
    ])
    expect(inspectText('x@example.com', compiled)).toEqual({
      text: '[REDACTED:email]',
      redacted: [{ detector: 'email', action: 'redact', count: 1 }],
    })
  })

  test('a text with no match comes back equal and with no findings', () => {
    const compiled = compileFilters(
      ['email', 'phone', 'credit_card', 'iban', 'us_ssn', 'ip_address', 'secret'].map(
        (detector) => ({ detector, action: 'redact' }),
      ),
    )
    const clean = 'Summarise the 3 main points of chapter 12, version 1.2.3, published 2024-05-01.'
    const result = inspectText(clean, compiled)
    expect(result.text).toBe(clean)
    expect(result.redacted).toEqual([])
  })

  test('hasFilters is false only for an empty list', () => {
    expect(hasFilters(compileFilters([]))).toBe(false)
    expect(hasFilters(compileFilters([{ detector: 'email', action: 'block' }]))).toBe(true)
  })
})

describe('compileFilters', () => {
  const cases: [string, unknown, string][] = [
    ['not a list', { detector: 'email' }, 'Content filters must be a list'],
    [
      'too many filters',
      Array.from({ length: 51 }, () => ({ detector: 'email', action: 'block' })),
      'Content filters: 51 given, at most 50.',
    ],
    ['a filter that is not an object', ['email'], 'Filter 1 must be an object'],
    [
      'an unknown detector',
      [
        { detector: 'email', action: 'block' },
        { detector: 'passport', action: 'block' },
      ],
      'Filter 2: Detector must be one of',
    ],
    [
      'an unknown field',
      [{ detector: 'email', action: 'block', severity: 'high' }],
      'Filter 1: severity is not a field of a filter.',
    ],
    [
      'an unknown action',
      [{ detector: 'email', action: 'warn' }],
      'Filter 1: Action must be block or redact.',
    ],
    [
      'a regex filter without a pattern',
      [{ detector: 'regex', action: 'block' }],
      'Filter 1: Pattern is required',
    ],
    [
      'a pattern that is too long',
      [{ detector: 'regex', action: 'block', pattern: 'a'.repeat(1001) }],
      'Filter 1: Pattern is required for a custom pattern: 1 to 1000 characters.',
    ],
    [
      'a pattern on a built-in detector',
      [{ detector: 'email', action: 'block', pattern: 'x' }],
      'Filter 1: Pattern is only allowed',
    ],
    [
      'an invalid pattern',
      [
        { detector: 'email', action: 'block' },
        { detector: 'email', action: 'redact' },
        { detector: 'regex', action: 'block', pattern: '(abc' },
      ],
      'Filter 3: Pattern is not a valid pattern: missing closing )',
    ],
    [
      'a lookahead, which RE2 does not have',
      [{ detector: 'regex', action: 'block', pattern: 'a(?=b)' }],
      'Filter 1: Pattern is not a valid pattern',
    ],
    [
      'a pattern that matches the empty string',
      [{ detector: 'regex', action: 'block', pattern: 'x*' }],
      'Filter 1: Pattern matches the empty string.',
    ],
    [
      'a keywords filter without keywords',
      [{ detector: 'keywords', action: 'block' }],
      'Filter 1: Keywords are required',
    ],
    [
      'an empty keyword list',
      [{ detector: 'keywords', action: 'block', keywords: [] }],
      'Filter 1: Keywords are required',
    ],
    [
      'a blank keyword',
      [{ detector: 'keywords', action: 'block', keywords: ['ok', ' '] }],
      'Filter 1: Keywords must not be blank or longer than 200 characters (keyword 2).',
    ],
    [
      'a keyword that is too long',
      [{ detector: 'keywords', action: 'block', keywords: ['k'.repeat(201)] }],
      'Filter 1: Keywords must not be blank or longer than 200 characters (keyword 1).',
    ],
    [
      'too many keywords',
      [
        {
          detector: 'keywords',
          action: 'block',
          keywords: Array.from({ length: 501 }, (_, i) => `k${i}`),
        },
      ],
      'Filter 1: Keywords are required for a keyword list: 1 to 500 of them.',
    ],
    [
      'keywords on another detector',
      [{ detector: 'regex', action: 'block', pattern: 'x', keywords: ['x'] }],
      'Filter 1: Keywords are only allowed',
    ],
    [
      'a name that would close the marker',
      [{ detector: 'email', action: 'redact', name: 'x] [y' }],
      'Filter 1: Label must be 1 to 64 characters without brackets or control characters.',
    ],
  ]
  for (const [what, filters, message] of cases) {
    test(`rejects ${what}`, () => {
      expect(() => compileFilters(filters)).toThrow(FilterError)
      expect(() => compileFilters(filters)).toThrow(message)
    })
  }

  test('accepts every detector with the fields it needs', () => {
    const filters: Filter[] = [
      ...(['email', 'phone', 'credit_card', 'iban', 'us_ssn', 'ip_address', 'secret'] as const).map(
        (detector) => ({ detector, action: 'block' as const }),
      ),
      { detector: 'regex', action: 'redact', pattern: '(?i)secret', name: 'Secret word' },
      {
        detector: 'keywords',
        action: 'redact',
        keywords: Array.from({ length: 500 }, (_, i) => `word${i}`),
      },
    ]
    expect(hasFilters(compileFilters(filters))).toBe(true)
  })
})

describe('linear time', () => {
  const within = (ms: number, run: () => void) => {
    const started = performance.now()
    run()
    expect(performance.now() - started).toBeLessThan(ms)
  }

  test('pathological user patterns over 100k characters return', () => {
    const compiled = compileFilters([
      { detector: 'regex', action: 'block', pattern: '(a|a)*b' },
      { detector: 'regex', action: 'redact', pattern: '(a+)+$' },
    ])
    within(2_000, () => {
      expect(inspectText('a'.repeat(100_000) + '!', compiled)).toEqual({
        text: 'a'.repeat(100_000) + '!',
        redacted: [],
      })
      expect(inspectText('a'.repeat(100_000), compiled).text).toBe('[REDACTED:regex]')
    })
  })

  test('built-in detectors over 100k characters of near misses return', () => {
    const compiled = compileFilters(
      ['email', 'phone', 'credit_card', 'iban', 'us_ssn', 'ip_address', 'secret'].map(
        (detector) => ({ detector, action: 'redact' }),
      ),
    )
    const nearMisses = ['000-00-0000 ', '1.', 'AB12 ', '1234 ', 'a@', '::', 'eyJa.', '+1 (', 'sk-a']
    within(2_000, () => {
      for (const unit of nearMisses)
        inspectText(unit.repeat(Math.ceil(100_000 / unit.length)), compiled)
    })
  })
})
