/** Demo data: shop types, 24 shops around West Lake (Hangzhou), vouchers, a merchant, an admin. */

export const DEMO_PASSWORD = { admin: 'admin123', merchant: 'merchant123' } as const;

export const demoAccounts = [
  { phone: '13800000000', nick_name: '平台管理员', role: 'admin' as const, password: DEMO_PASSWORD.admin },
  { phone: '13800000001', nick_name: '西湖餐饮商家', role: 'merchant' as const, password: DEMO_PASSWORD.merchant },
  { phone: '13800000002', nick_name: '滨江休闲商家', role: 'merchant' as const, password: DEMO_PASSWORD.merchant },
];

export const shopTypes = [
  { name: '美食', icon: '/types/food.svg', sort: 1 },
  { name: 'KTV', icon: '/types/ktv.svg', sort: 2 },
  { name: '丽人·美发', icon: '/types/hair.svg', sort: 3 },
  { name: '健身运动', icon: '/types/gym.svg', sort: 4 },
  { name: '按摩·足疗', icon: '/types/massage.svg', sort: 5 },
  { name: '美容SPA', icon: '/types/spa.svg', sort: 6 },
  { name: '亲子游乐', icon: '/types/kids.svg', sort: 7 },
  { name: '酒吧', icon: '/types/bar.svg', sort: 8 },
];

const areas = ['大关', '拱宸桥', '北山街', '运河上街', '远洋乐堤港', '湖滨', '西溪', '滨江'];
const names: Record<string, string[]> = {
  美食: ['103茶餐厅', '蔡馬洪涛烤肉·老北京铜锅涮羊肉', '新白鹿餐厅(运河上街店)', 'Mamala(杭州远洋乐堤港店)', '海底捞火锅(水晶城购物中心店)', '幸福里老北京涮锅(丝联店)', '炉鱼(拱墅万达广场店)', '开乐迪KTV美食坊'],
  KTV: ['星聚会KTV(拱墅区万达店)', 'K歌之王(运河店)', '温莎KTV(滨江店)'],
  '丽人·美发': ['造型师工作室(湖滨店)', '丝域养发馆(大关店)'],
  健身运动: ['乐刻健身(运河上街店)', '超级猩猩(湖滨银泰店)'],
  '按摩·足疗': ['足道养生馆(北山街店)', '御足堂(西溪店)'],
  美容SPA: ['悦榕SPA(西湖店)', '美丽田园(滨江店)'],
  亲子游乐: ['奈尔宝家庭中心(乐堤港店)', '海洋乐园(滨江店)'],
  酒吧: ['Hush酒吧(湖滨店)', '音乐现场Livehouse(运河店)', '精酿工坊(西溪店)'],
};

export interface DemoShop {
  name: string;
  typeName: string;
  area: string;
  address: string;
  x: number;
  y: number;
  avgPrice: number;
  score: number;
  sold: number;
  comments: number;
  openHours: string;
  images: string;
  /** Index into demoAccounts of the merchant who owns it, or null. */
  owner: number | null;
}

/** Deterministic pseudo-random so the seed is the same on every machine. */
function rng(seed: number) {
  let s = seed;
  return () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648);
}

export function demoShops(): DemoShop[] {
  const r = rng(42);
  const out: DemoShop[] = [];
  let i = 0;
  for (const [typeName, list] of Object.entries(names)) {
    for (const name of list) {
      const area = areas[i % areas.length]!;
      out.push({
        name,
        typeName,
        area,
        address: `${area}${(i * 37) % 300 + 1}号`,
        x: Number((120.1 + r() * 0.12).toFixed(6)),
        y: Number((30.22 + r() * 0.1).toFixed(6)),
        avgPrice: (40 + Math.floor(r() * 160)) * 100,
        score: 35 + Math.floor(r() * 16),
        sold: Math.floor(r() * 5000),
        comments: Math.floor(r() * 3000),
        openHours: i % 3 === 0 ? '10:00-22:00' : i % 3 === 1 ? '11:00-23:30' : '09:00-21:00',
        images: `/shops/${(i % 6) + 1}.svg`,
        owner: i < 6 ? 1 : i < 10 ? 2 : null,
      });
      i++;
    }
  }
  return out;
}
