// The signed-in user's own balance above their tokens, read afresh from
// /api/auth/me (the session's copy is from sign-in). Post-consume can take a
// balance below zero; it is shown as it is, with what that means.
import { useQuery } from '@tanstack/react-query';
import { useLang } from '../../i18n';
import { formatUnits, me } from '../gateway-api';

export function OwnBalance() {
  const { t } = useLang();
  // Invalidated by every change of the user's tokens (the page above).
  const { data: user } = useQuery({ queryKey: ['me'], queryFn: me });
  if (!user) return null;
  const negative = user.balance < 0;
  return (
    <p className={negative ? 'notice error' : 'muted'} data-testid="own-balance">
      <span>{t('tokens.ownBalance', { balance: formatUnits(user.balance) })}</span>
      {negative && <span> {t('tokens.ownBalanceNegative')}</span>}
    </p>
  );
}
