/** Login messages the server sends and the login form reacts to (pure: shared with the browser). */
export const PASSWORD_REQUIRED_MESSAGE = '商家和管理员账号请使用密码登录';
