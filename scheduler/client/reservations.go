package client

import (
	"context"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// CreateReservation asks for an admin reservation (operators and admins).
func (c *Client) CreateReservation(ctx context.Context, spec *pb.ReservationSpec) (*pb.Reservation, error) {
	return c.resv.Create(ctx, spec)
}

// UpdateReservation changes the named fields of spec.Name's reservation.
func (c *Client) UpdateReservation(ctx context.Context, spec *pb.ReservationSpec, fields []string) (*pb.Reservation, error) {
	return c.resv.Update(ctx, &pb.UpdateReservationRequest{Spec: spec, Fields: fields})
}

// DeleteReservation removes a reservation no running job uses.
func (c *Client) DeleteReservation(ctx context.Context, name string) error {
	_, err := c.resv.Delete(ctx, &pb.DeleteReservationRequest{Name: name})
	return err
}

// ListReservations returns every reservation, by name.
func (c *Client) ListReservations(ctx context.Context) ([]*pb.Reservation, error) {
	r, err := c.resv.List(ctx, &pb.ListReservationsRequest{})
	if err != nil {
		return nil, err
	}
	return r.GetReservations(), nil
}

// GetReservation returns one reservation.
func (c *Client) GetReservation(ctx context.Context, name string) (*pb.Reservation, error) {
	return c.resv.Get(ctx, &pb.GetReservationRequest{Name: name})
}
