// Imported first by main.tsx. Shared modules (the editing options' rules) bring zod into the studio,
// and zod probes `new Function` when an object schema is made, to compile fast parsers. The studio's
// CSP has no 'unsafe-eval', so that probe is a CSP violation in the console on every page: zod is
// told to parse without compiling before any schema exists.
import { z } from 'zod';

z.config({ jitless: true });
