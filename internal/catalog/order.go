package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"lembas/internal/fault"
)

// The order is one list across every connection: position 0..n-1, no
// gaps, no ties. Every change reads the current order and writes the new
// one inside one write transaction, so two administrators dragging at once
// leave some dense order rather than a mix of both.

// loadOrder returns every model id in the current order.
func loadOrder(ctx context.Context, tx *sql.Tx) ([]string, map[string]int, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, position FROM models ORDER BY position, id`)
	if err != nil {
		return nil, nil, fmt.Errorf("catalog: load order: %w", err)
	}
	defer rows.Close()
	var ids []string
	pos := map[string]int{}
	for rows.Next() {
		var id string
		var p int
		if err := rows.Scan(&id, &p); err != nil {
			return nil, nil, fmt.Errorf("catalog: load order: %w", err)
		}
		ids = append(ids, id)
		pos[id] = p
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("catalog: load order: %w", err)
	}
	return ids, pos, nil
}

// writeOrder stores ids as positions 0..n-1, touching only rows whose
// position changes.
func writeOrder(ctx context.Context, tx *sql.Tx, ids []string, cur map[string]int, now int64) error {
	stmt, err := tx.PrepareContext(ctx, `UPDATE models SET position = ?, updated_at = ? WHERE id = ?`)
	if err != nil {
		return fmt.Errorf("catalog: write order: %w", err)
	}
	defer stmt.Close()
	for i, id := range ids {
		if p, ok := cur[id]; ok && p == i {
			continue
		}
		if _, err := stmt.ExecContext(ctx, i, now, id); err != nil {
			return fmt.Errorf("catalog: write order: %w", err)
		}
	}
	return nil
}

// renumber closes gaps left by deleted rows. It leaves updated_at alone:
// closing a gap is nobody's edit of the rows that move.
func renumber(ctx context.Context, tx *sql.Tx) error {
	ids, cur, err := loadOrder(ctx, tx)
	if err != nil {
		return err
	}
	for i, id := range ids {
		if cur[id] == i {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE models SET position = ? WHERE id = ?`, i, id); err != nil {
			return fmt.Errorf("catalog: renumber: %w", err)
		}
	}
	return nil
}

// Direction is a one-step move in the admin list.
type Direction int

const (
	Up     Direction = iota // one place earlier
	Down                    // one place later
	Top                     // first
	Bottom                  // last
)

// Move moves a model one step, or to either end.
func (s *Service) Move(ctx context.Context, id string, dir Direction) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		ids, cur, err := loadOrder(ctx, tx)
		if err != nil {
			return err
		}
		i := slices.Index(ids, id)
		if i < 0 {
			return fmt.Errorf("catalog: move %s: %w", id, ErrNoModel)
		}
		to := i
		switch dir {
		case Up:
			to = i - 1
		case Down:
			to = i + 1
		case Top:
			to = 0
		case Bottom:
			to = len(ids) - 1
		default:
			return fault.Field("direction", "Unknown direction.")
		}
		return writeOrder(ctx, tx, moveIndex(ids, i, to), cur, s.nowMillis())
	})
}

// MoveTo puts a model at position (0 first); a position past either end
// means that end.
func (s *Service) MoveTo(ctx context.Context, id string, position int) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		ids, cur, err := loadOrder(ctx, tx)
		if err != nil {
			return err
		}
		i := slices.Index(ids, id)
		if i < 0 {
			return fmt.Errorf("catalog: move %s: %w", id, ErrNoModel)
		}
		return writeOrder(ctx, tx, moveIndex(ids, i, position), cur, s.nowMillis())
	})
}

// moveIndex returns ids with the element at i moved to index to, clamped.
func moveIndex(ids []string, i, to int) []string {
	to = max(0, min(to, len(ids)-1))
	if to == i {
		return ids
	}
	id := ids[i]
	out := slices.Delete(slices.Clone(ids), i, i+1)
	return slices.Insert(out, to, id)
}

// Reorder puts the given models in the given order. ids may be a subset,
// such as one page or one connection's models in a filtered list: they are
// rearranged among the positions they occupy now and every other model
// stays where it is. Ids that no longer exist are skipped; a repeated id is
// refused.
func (s *Service) Reorder(ctx context.Context, ids []string) error {
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		if seen[id] {
			return fault.Field("order", "The new order names a model twice.")
		}
		seen[id] = true
	}
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		all, cur, err := loadOrder(ctx, tx)
		if err != nil {
			return err
		}
		var slots []int // indexes in all held by the models being reordered
		for i, id := range all {
			if seen[id] {
				slots = append(slots, i)
			}
		}
		next := slices.Clone(all)
		k := 0
		for _, id := range ids {
			if _, ok := cur[id]; !ok {
				continue
			}
			next[slots[k]] = id
			k++
		}
		return writeOrder(ctx, tx, next, cur, s.nowMillis())
	})
}
