/**
 * Every unit spoken for (docs/fair-sale.md#every-unit-spoken-for) in a phone-sized browser, against
 * the production build: the e2e web server keeps a reserve of 10 past the stock (ROOM_RESERVE_MIN,
 * e2e/playwright.config.ts). Twenty people took tickets before the start of a one-unit sale (never
 * refused then); a visitor arriving after the start hears 名额已满, without a place, while the live
 * tickets reach the stock plus the reserve (1 + 10). None of the twenty buys: the one unit is held by
 * one admitted ticket at a time, for a second each here, so about one hold lapses a second, and
 * after ten or so the room opens again by itself and 再试一次 gives a place behind them.
 */
import { expect, test } from '@playwright/test';
import { journeyData } from './support/journey-data';
import { loginBySms } from './support/login';
import { look } from './support/look';

const f = journeyData('103茶餐厅');

test('名额已满 after the start → 再试一次 once holds lapse → a place behind the twenty', async ({ page }) => {
  test.setTimeout(120_000);
  await loginBySms(page, undefined, '/');
  const begin = Date.now() + 3000;
  const v = await f.data.voucher({ stock: 1, label: '满员', startsInMs: 3000, room: { powCost: 5000 } });
  await f.data.roomTickets(v.id, 20, 960_000_001);
  await page.waitForTimeout(Math.max(0, begin - Date.now()) + 300);

  await page.goto(`/seckill/${v.id}/room`);
  const full = page.getByTestId('room-full');
  await expect(full).toContainText('名额已满');
  await expect(page.getByTestId('room-position')).toHaveCount(0);
  await look(page, 'room-full');

  // Again until the room has opened: each 再试一次 joins afresh (the first ones may hear it again).
  await expect
    .poll(
      async () => {
        if (await page.getByTestId('room-waiting').isVisible()) return 'waiting';
        if (await page.getByTestId('room-full-again').isVisible()) await page.getByTestId('room-full-again').click();
        return 'full';
      },
      { timeout: 60_000, intervals: [1500] },
    )
    .toBe('waiting');
  await expect(page.getByTestId('room-position')).toHaveText('21');
  await look(page, 'room-full-then-place');
});
