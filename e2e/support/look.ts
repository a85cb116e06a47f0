/**
 * What the browser specs do at each new state of a page: a screenshot when E2E_SCREENSHOTS names
 * a folder (to look at), and, for `look`, axe-core's WCAG 2 A/AA rules on the page as it is then
 * (a soft failure naming the state, so one run lists every state that fails).
 */
import { expect, type Page } from '@playwright/test';
import { wcagViolations } from './axe';

const SHOTS = process.env.E2E_SCREENSHOTS;

export async function shot(page: Page, name: string): Promise<void> {
  if (SHOTS) await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
}

/** The screenshot and the WCAG check of the page's current state. */
export async function look(page: Page, name: string): Promise<void> {
  await shot(page, name);
  expect.soft(await wcagViolations(page), `${name}: WCAG 2 AA`).toEqual([]);
}
