import { describe, expect, it } from 'vitest';
import { loadScripts } from '@/lib/redis/scripts';

/**
 * Every Lua script's SHA1 is pinned, so changing a script is a deliberate act (and a reviewer
 * sees it). After an intended change, update the hash here in the same commit.
 */
const pinned: Record<string, string> = {
  'lock-acquire': 'c8fc328c74e8a44bdbcb96f24a7f3c1fab669461',
  'lock-extend': '6521d61b55c9c5354ede9c8575012f6f034f0d36',
  'lock-fence-raise': '234b300300ad4c44a15c06c948ac3074374f8226',
  'lock-fence-next': '81ad21b4a5fe4e917970514e7c7f696260cf2bcc',
  'lock-fenced-del': '0e28d46e74d221f8848850fd71654fdeeacd286b',
  'lock-fenced-set': '4d990dc60dc8e774329042b136fb0244afca7ef3',
  'lock-release': 'fd9ac85dc514618fe91a6a01b55c8ef37ccff0fe',
  'login-check-code': '8f849ba0808a1182703e8caf18654c818bf68303',
  'seckill-bucket-give': '4ef6ec319b5d16ee76ed640c849a781051956e89',
  'seckill-bucket-take': '5580dd5a89641065d631e6d27f179a9782b96518',
  'seckill-grab': 'a010f2122d7141d48898cc9edaf9d2276a9b2b03',
  'seckill-epoch': '795dc6585d215b5622ad1740ca9dc6e9ac019335',
  'seckill-gate-pass': '81224ed333177d0120d60e3cd134293a69ad792b',
  'seckill-order-id': '77c7b7ad9dd201b15a72702eaff256fef35f87b3',
  'seckill-preheat': '8d0fcd256f3909f3d73720e47fc2959eefbd3427',
  'seckill-room-look': '55cb38dc7f858b6987a61ee477dbc13624914157',
  'seckill-room-open': 'cc74ff9dfc1b994807700038ec008e22f2d72058',
  'seckill-room-shuffle': '4065b50160d194c448e03d3eda6fc2d00f8da7c2',
  'seckill-release': '14f4a226751e7795919cee70dc834f7c44d990be',
  'seckill-return': 'af090b41e82e9b06d139846fd03ee138169743a3',
  'seckill-offer-claim': '46f86f509089f5818a10975e66200f0311a78c81',
  'seckill-offer-expire': '63cbc1781ad13913493d66dbeb6d391fa90aa637',
  'seckill-waitlist-join': '1d0c47c88a32e8b5c14514c77dfe75b0325cfab8',
  'seckill-turn-keep': '9aeca240fe5abab1c41eb513570a2585c9c53123',
  'seckill-touch-pending': '2a84d9f245fedf747ed488643dc7f073447d094d',
  'session-touch': '60db9c5b5159a996735be5ba843c3427c934e100',
  'voucher-shift-stock': '7e266f2c32fc9d976dcc03a4a07599e7c8f5d71e',
  'blog-like-set': '14cbfc644ceada38281b3eb21d378fc441d10091',
  'blog-like-toggle': '01818da1eb11264bc975837a93344d22c05dc526',
  'blog-like-fill': '0f3abd5ff4d67ea9f08aa6bda192394c40a06eb4',
  'feed-push': '72566220c622c3173f52d1de140ba4ff397792c0',
  'follow-apply': '3a0d4e3f90b4039ee6f9284e8c50fbad0a294597',
  'follow-fill': '67c7425fd4bd79dd1328730c133abfa26f5c29c5',
};

describe('lua/ scripts', () => {
  const scripts = loadScripts();

  it('every script is pinned and no pin is stale', () => {
    expect([...scripts.keys()].sort()).toEqual(Object.keys(pinned).sort());
  });

  it('a script that includes a part of lua/include/ is sent with the part in it, and nothing left to include', () => {
    for (const s of scripts.values()) expect(s.lua, s.name).not.toMatch(/^--#include/m);
    expect(scripts.get('seckill-turn-keep')?.lua).toMatch(/^local function keepTurn\(/m);
    expect(scripts.get('seckill-room-look')?.lua).toMatch(/^local function keepTurn\(/m);
    expect(scripts.get('seckill-room-look')?.lua).toMatch(/^local function passGate\(/m);
  });

  it.each(Object.entries(pinned))('%s has the pinned SHA1', (name, sha) => {
    expect(scripts.get(name)?.sha1).toBe(sha);
  });

  it('every script opens with a header naming KEYS, ARGV and what it returns', () => {
    for (const s of scripts.values()) {
      const header = s.lua.slice(0, s.lua.indexOf(']]'));
      expect(header, s.name).toMatch(/KEYS/);
      expect(header, s.name).toMatch(/ARGV/);
      expect(header, s.name).toMatch(/Returns/i);
    }
  });
});
