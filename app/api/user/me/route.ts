import { route } from '@/lib/http/route';

export const GET = route({ auth: 'user' }, async ({ user }) => user);
